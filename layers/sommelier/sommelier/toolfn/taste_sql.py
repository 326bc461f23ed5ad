"""A customer's remembered taste in PostgreSQL (migration 0013, `taste_profiles`): read it, and learn from a
note (a vote, or what a turn's message said). The profile itself is computed by `domain.taste.learn`, the same
function the in-memory store runs, so both stores keep the same profile."""

from __future__ import annotations

from typing import Any

import psycopg

from sommelier.domain import taste
from sommelier.domain.search import require_object
from sommelier.toolfn import catalog_sql


def _telegram_user(args: dict[str, Any]) -> int:
    from sommelier.toolfn.chat_sql import _telegram_id

    user_id = _telegram_id(args, "telegram_user_id")
    return int(user_id or 0)  # required: _telegram_id raised when it is absent


_READ = "SELECT profile FROM taste_profiles WHERE telegram_user_id = %s"
_READ_FOR_UPDATE = _READ + " FOR UPDATE"


def load(conn: psycopg.Connection, user_id: int, *, lock: bool = False) -> taste.TasteProfile | None:
    row = conn.execute(_READ_FOR_UPDATE if lock else _READ, (user_id,)).fetchone()
    return None if row is None else taste.from_json(row[0])


def taste_profile(conn: psycopg.Connection, arguments: Any) -> taste.TasteProfile:
    """The customer's profile (an empty one when nothing is kept)."""
    return load(conn, _telegram_user(require_object(arguments))) or taste.TasteProfile()


def learn(conn: psycopg.Connection, user_id: int, note: taste.TasteNote) -> taste.TasteProfile | None:
    """Fold a note into the user's profile (inside the caller's transaction); None when it teaches nothing."""
    if note.empty:
        return None
    from psycopg.types.json import Jsonb

    ids = list(dict.fromkeys([*note.liked, *note.disliked]))
    wines = {w.id: w for w in catalog_sql.get_wines(conn, {"ids": ids}).wines} if ids else {}
    learned = taste.learn(load(conn, user_id, lock=True), note, wines)
    if learned.empty:
        return None
    conn.execute(
        "INSERT INTO taste_profiles (telegram_user_id, profile) VALUES (%s, %s)"
        " ON CONFLICT (telegram_user_id) DO UPDATE SET profile = EXCLUDED.profile, updated_at = now()",
        (user_id, Jsonb(taste.to_json(learned))),
    )
    return learned


def answer_wine_ids(conn: psycopg.Connection, message_id: int, chat_id: int) -> list[str]:
    """The wines an answer showed (what a 👍 or 👎 under it speaks of)."""
    row = conn.execute("SELECT wine_ids FROM messages WHERE id = %s AND chat_id = %s", (message_id, chat_id)).fetchone()
    return [str(w) for w in row[0]] if row else []
