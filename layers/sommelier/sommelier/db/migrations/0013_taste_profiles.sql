-- A customer's remembered taste (issue 37): one row per Telegram user, the profile as JSON
-- (domain/taste.py: liked and disliked wines, styles, grapes, disliked traits, the usual budget).
-- Only the user id is kept beside it; /forget deletes the row (toolfn/shop_sql.forget_user).
-- Every statement is idempotent. The table gets the sommelier_app data rights through the default
-- privileges of migration 0002.
CREATE TABLE IF NOT EXISTS taste_profiles (
    telegram_user_id bigint PRIMARY KEY,
    profile          jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_taste_profiles_object CHECK (jsonb_typeof(profile) = 'object')
);
