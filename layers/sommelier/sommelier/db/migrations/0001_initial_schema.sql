-- Catalogue, users, conversation history and feedback (docs/catalog.md).
-- Every statement is idempotent so a half-applied file can be re-run safely.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS wines (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name             text NOT NULL,
    producer         text NOT NULL,
    country          text NOT NULL,
    region           text NOT NULL DEFAULT '',
    appellation      text,
    vintage_year     integer,
    grape_varieties  text[] NOT NULL,
    wine_type        text NOT NULL,
    sweetness        text NOT NULL,
    body             smallint NOT NULL,
    tannins          smallint NOT NULL,
    acidity          smallint NOT NULL,
    price_rub        numeric(12, 2) NOT NULL,
    description      text NOT NULL,
    tasting_notes    text NOT NULL DEFAULT '',
    food_pairings    text[] NOT NULL DEFAULT '{}',
    image_key        text,
    telegram_file_id text,
    embedding        vector(1536),
    embedding_model  text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_wines_name CHECK (char_length(name) BETWEEN 1 AND 200),
    CONSTRAINT ck_wines_producer CHECK (char_length(producer) BETWEEN 1 AND 200),
    CONSTRAINT ck_wines_country CHECK (char_length(country) BETWEEN 1 AND 100),
    CONSTRAINT ck_wines_vintage_year CHECK (vintage_year IS NULL OR vintage_year BETWEEN 1900 AND 2100),
    CONSTRAINT ck_wines_grape_varieties CHECK (cardinality(grape_varieties) BETWEEN 1 AND 20),
    CONSTRAINT ck_wines_wine_type CHECK (wine_type IN ('red', 'white', 'rose', 'sparkling')),
    CONSTRAINT ck_wines_sweetness CHECK (sweetness IN ('dry', 'semi_dry', 'semi_sweet', 'sweet')),
    CONSTRAINT ck_wines_body CHECK (body BETWEEN 1 AND 5),
    CONSTRAINT ck_wines_tannins CHECK (tannins BETWEEN 1 AND 5),
    CONSTRAINT ck_wines_acidity CHECK (acidity BETWEEN 1 AND 5),
    CONSTRAINT ck_wines_price_rub CHECK (price_rub > 0),
    CONSTRAINT ck_wines_description CHECK (char_length(description) BETWEEN 1 AND 2000),
    CONSTRAINT ck_wines_tasting_notes CHECK (char_length(tasting_notes) <= 2000),
    CONSTRAINT ck_wines_food_pairings CHECK (cardinality(food_pairings) <= 30),
    CONSTRAINT ck_wines_embedding_model CHECK ((embedding IS NULL) = (embedding_model IS NULL)),
    -- NV wines have a NULL vintage; they must still be unique by name and producer.
    CONSTRAINT uq_wines_name_producer_vintage UNIQUE NULLS NOT DISTINCT (name, producer, vintage_year)
);

CREATE INDEX IF NOT EXISTS ix_wines_embedding_hnsw ON wines USING hnsw (embedding vector_cosine_ops);
CREATE INDEX IF NOT EXISTS ix_wines_grape_varieties ON wines USING gin (grape_varieties);
CREATE INDEX IF NOT EXISTS ix_wines_food_pairings ON wines USING gin (food_pairings);
CREATE INDEX IF NOT EXISTS ix_wines_fulltext ON wines USING gin (
    to_tsvector('russian'::regconfig, name || ' ' || producer || ' ' || description || ' ' || tasting_notes)
);
CREATE INDEX IF NOT EXISTS ix_wines_type_sweetness_price ON wines (wine_type, sweetness, price_rub);
CREATE INDEX IF NOT EXISTS ix_wines_price ON wines (price_rub);

CREATE TABLE IF NOT EXISTS users (
    telegram_user_id bigint PRIMARY KEY,
    chat_id          bigint NOT NULL,
    username         text,
    first_name       text,
    last_name        text,
    language_code    text,
    profile          jsonb NOT NULL DEFAULT '{}'::jsonb,
    is_active        boolean NOT NULL DEFAULT true,
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_seen_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_users_profile_object CHECK (jsonb_typeof(profile) = 'object')
);
CREATE INDEX IF NOT EXISTS ix_users_chat_id ON users (chat_id);

CREATE TABLE IF NOT EXISTS messages (
    id            bigserial PRIMARY KEY,
    chat_id       bigint NOT NULL,
    user_id       bigint,
    role          text NOT NULL,
    content       text NOT NULL,
    wine_ids      uuid[] NOT NULL DEFAULT '{}',
    response_type text,
    update_id     bigint,
    archived      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_messages_role CHECK (role IN ('user', 'assistant')),
    CONSTRAINT ck_messages_content_length CHECK (char_length(content) <= 2000),
    CONSTRAINT ck_messages_response_type CHECK (
        response_type IS NULL OR response_type IN ('recommendation', 'informational', 'off_topic')
    )
);
CREATE INDEX IF NOT EXISTS ix_messages_chat_recent ON messages (chat_id, id DESC) WHERE NOT archived;
-- A redelivered turn (same Telegram update) is saved once.
CREATE UNIQUE INDEX IF NOT EXISTS uq_messages_chat_update_role ON messages (chat_id, update_id, role)
    WHERE update_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS feedback (
    id         bigserial PRIMARY KEY,
    chat_id    bigint NOT NULL,
    user_id    bigint NOT NULL,
    message_id bigint REFERENCES messages (id) ON DELETE SET NULL,
    wine_id    uuid REFERENCES wines (id) ON DELETE SET NULL,
    rating     smallint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_feedback_rating CHECK (rating IN (-1, 1))
);
-- One vote per user per answer; a second press changes the vote.
CREATE UNIQUE INDEX IF NOT EXISTS uq_feedback_user_message ON feedback (user_id, message_id)
    WHERE message_id IS NOT NULL;
