-- Telegram as it really is (issue 16): state per (user, chat), and votes that can change.
-- Every statement is idempotent. New tables get the sommelier_app data rights through the default
-- privileges of migration 0002.

-- Whether the bot can still write to a user in a given chat. A private block, a removal from a group
-- and an unblock each change only their own row; users.is_active says "reachable in some chat".
CREATE TABLE IF NOT EXISTS user_chats (
    telegram_user_id bigint NOT NULL REFERENCES users (telegram_user_id) ON DELETE CASCADE,
    chat_id          bigint NOT NULL,
    is_active        boolean NOT NULL DEFAULT true,
    changed_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (telegram_user_id, chat_id)
);
CREATE INDEX IF NOT EXISTS ix_user_chats_chat ON user_chats (chat_id);

-- Users known before this migration: the one chat the old schema kept for them.
INSERT INTO user_chats (telegram_user_id, chat_id, is_active)
SELECT telegram_user_id, chat_id, is_active FROM users
ON CONFLICT (telegram_user_id, chat_id) DO NOTHING;

-- One vote per (user, answer), changeable: the last press wins, and the row says it was changed.
ALTER TABLE feedback ADD COLUMN IF NOT EXISTS previous_rating smallint;
ALTER TABLE feedback ADD COLUMN IF NOT EXISTS changed_at timestamptz;
ALTER TABLE feedback ADD COLUMN IF NOT EXISTS presses integer NOT NULL DEFAULT 1;
