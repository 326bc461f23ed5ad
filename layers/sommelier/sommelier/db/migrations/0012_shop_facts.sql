-- The shop's own facts (issue 36): one row, the owner's shop file as validated JSON (docs/shop.md).
-- Every statement is idempotent. The table gets the sommelier_app data rights through the default
-- privileges of migration 0002.
CREATE TABLE IF NOT EXISTS shop_facts (
    id         smallint PRIMARY KEY DEFAULT 1,
    facts      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_shop_facts_one_row CHECK (id = 1),
    CONSTRAINT ck_shop_facts_object CHECK (jsonb_typeof(facts) = 'object')
);
