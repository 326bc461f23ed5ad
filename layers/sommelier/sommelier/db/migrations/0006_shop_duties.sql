-- A shop's duties (issue 19): the customer's age answer, and per-turn figures for the weekly report.
-- Every statement is idempotent. New tables get the sommelier_app data rights through the default
-- privileges of migration 0002.

-- One row per Telegram user who answered the age question. A customer who said «Нет» is kept here
-- (and only here) so the bot does not ask again at every message; /forget deletes the row.
CREATE TABLE IF NOT EXISTS age_answers (
    telegram_user_id bigint PRIMARY KEY,
    is_adult         boolean NOT NULL,
    answered_at      timestamptz NOT NULL DEFAULT now()
);

-- What each saved turn cost and how it was answered: no user id and no chat id, so the aggregate
-- figures (turns, LLM fallback rate, tokens) outlive /forget and the message retention period.
CREATE TABLE IF NOT EXISTS turn_stats (
    id                bigserial PRIMARY KEY,
    mode              text NOT NULL,
    llm_calls         integer NOT NULL DEFAULT 0,
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    wines_shown       integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_turn_stats_mode CHECK (char_length(mode) BETWEEN 1 AND 40),
    CONSTRAINT ck_turn_stats_counts CHECK (
        llm_calls >= 0 AND prompt_tokens >= 0 AND completion_tokens >= 0 AND wines_shown >= 0
    )
);
CREATE INDEX IF NOT EXISTS ix_turn_stats_created ON turn_stats (created_at);

-- The retention job deletes by age; the weekly report reads a week of messages.
CREATE INDEX IF NOT EXISTS ix_messages_created ON messages (created_at);
-- /forget finds a user's rows by user id.
CREATE INDEX IF NOT EXISTS ix_messages_user ON messages (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS ix_feedback_user ON feedback (user_id);
