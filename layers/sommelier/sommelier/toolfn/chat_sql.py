"""Chat data in PostgreSQL: users, history, feedback and the Telegram photo cache.

Each operation takes a connection and JSON arguments (validated here) and returns a domain object; the
tool function answers its JSON (toolfn/handler.py, domain/wire.py) and the in-process adapter returns it as is.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from sommelier.db.pool import first_row
from sommelier.domain.conversation import (
    Archived,
    ChatMessage,
    ChatState,
    ChatStates,
    FeedbackResult,
    History,
    SavedTurn,
    StoredUser,
    TurnEnd,
    TurnOpening,
    TurnStart,
    UserUpsert,
)
from sommelier.domain.errors import InvalidArgument, ModelMismatchError, NotFound, PortError
from sommelier.domain.search import (
    ArgumentError,
    optional_limit,
    optional_text,
    require_object,
    single_uuid,
    uuid_list,
)
from sommelier.domain.taste import TasteNote, note_from_json
from sommelier.domain.wire import Updated
from sommelier.toolfn import catalog_sql, taste_sql
from sommelier.toolfn.facts_sql import load_facts

MAX_MESSAGE_CHARS = 2000
MAX_HISTORY = 50
_TELEGRAM_ID_LIMIT = 2**53  # Telegram ids fit in 52 bits


def _telegram_id(args: dict[str, Any], name: str, *, required: bool = True) -> int | None:
    value = args.get(name)
    if value is None:
        if required:
            raise ArgumentError(f"{name} is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= _TELEGRAM_ID_LIMIT:
        raise ArgumentError(f"{name} must be a Telegram id (an integer)")
    return value


def load_history(conn: psycopg.Connection, arguments: Any) -> History:
    args = require_object(arguments)
    chat_id = _telegram_id(args, "chat_id")
    limit = optional_limit(args, default=10, maximum=MAX_HISTORY)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT id, role, content, wine_ids, response_type, created_at FROM messages"
            " WHERE chat_id = %s AND NOT archived ORDER BY id DESC LIMIT %s",
            (chat_id, limit),
        ).fetchall()
    rows.reverse()
    return History(
        [
            ChatMessage(
                id=row["id"],
                role=row["role"],
                content=row["content"],
                wine_ids=[str(w) for w in row["wine_ids"]],
                response_type=row["response_type"],
                created_at=row["created_at"].isoformat(),
            )
            for row in rows
        ]
    )


def save_turn(conn: psycopg.Connection, arguments: Any) -> SavedTurn:
    """Save a successful turn (the user's text and the rendered answer) atomically, once per update."""
    args = require_object(arguments)
    chat_id = _telegram_id(args, "chat_id")
    user_id = _telegram_id(args, "user_id", required=False)
    update_id = _telegram_id(args, "update_id", required=False)
    user_text = optional_text(args, "user_text", MAX_MESSAGE_CHARS)
    answer_text = optional_text(args, "answer_text", MAX_MESSAGE_CHARS)
    if not user_text or not answer_text:
        raise ArgumentError("user_text and answer_text are required (at most 2000 characters each)")
    # optional_text folds whitespace; keep the paragraphs of the answer as written.
    answer_text = str(args["answer_text"]).strip()
    user_text = str(args["user_text"]).strip()
    wine_ids = uuid_list(args, "wine_ids")
    response_type = args.get("response_type")
    if response_type not in (None, "recommendation", "informational", "off_topic"):
        raise ArgumentError("response_type must be recommendation, informational or off_topic")
    stats = _turn_stats(args.get("stats"))
    with conn.transaction(), conn.cursor() as cur:
        ids = []
        first_delivery = True
        for role, content, wines, rtype in (
            ("user", user_text, [], None),
            ("assistant", answer_text, wine_ids, response_type),
        ):
            cur.execute(
                "INSERT INTO messages (chat_id, user_id, role, content, wine_ids, response_type, update_id)"
                " VALUES (%s, %s, %s, %s, %s::uuid[], %s, %s)"
                " ON CONFLICT (chat_id, update_id, role) WHERE update_id IS NOT NULL DO NOTHING RETURNING id",
                (chat_id, user_id, role, content, wines, rtype, update_id),
            )
            row = cur.fetchone()
            if row is None:  # already saved by an earlier delivery of the same update
                first_delivery = False
                row = first_row(
                    cur.execute(
                        "SELECT id FROM messages WHERE chat_id = %s AND update_id = %s AND role = %s",
                        (chat_id, update_id, role),
                    )
                )
            ids.append(row[0])
        if stats is not None and first_delivery:
            cur.execute(
                "INSERT INTO turn_stats (mode, llm_calls, prompt_tokens, completion_tokens, wines_shown)"
                " VALUES (%(mode)s, %(llm_calls)s, %(prompt_tokens)s, %(completion_tokens)s, %(wines_shown)s)",
                {**stats, "wines_shown": len(wine_ids)},
            )
        if user_id is not None and first_delivery and args.get("taste") is not None:
            taste_sql.learn(conn, user_id, note_from_json(args["taste"]))  # what the message said of taste
    return SavedTurn(saved=True, user_message_id=ids[0], assistant_message_id=ids[1])


_STAT_COUNTS = ("llm_calls", "prompt_tokens", "completion_tokens")


def _turn_stats(value: Any) -> dict[str, Any] | None:
    """The optional per-turn figures of save_turn (kept without any user or chat id, for the report)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ArgumentError("stats must be an object")
    mode = optional_text(value, "mode", 40)
    if not mode:
        raise ArgumentError("stats.mode is required")
    counts = {}
    for name in _STAT_COUNTS:
        number = value.get(name, 0)
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < 2**31:
            raise ArgumentError(f"stats.{name} must be a non-negative integer")
        counts[name] = number
    return {"mode": mode, **counts}


def reset_history(conn: psycopg.Connection, arguments: Any) -> Archived:
    """Forget the conversation (kept in the table, archived, so nothing is lost)."""
    chat_id = _telegram_id(require_object(arguments), "chat_id")
    with conn.transaction():
        count = conn.execute(
            "UPDATE messages SET archived = true WHERE chat_id = %s AND NOT archived", (chat_id,)
        ).rowcount
    return Archived(count)


def move_chat(conn: psycopg.Connection, arguments: Any) -> Updated:
    """A basic group became a supergroup (a new chat id): its conversation, votes and members go with it."""
    args = require_object(arguments)
    old = _telegram_id(args, "from_chat_id")
    new = _telegram_id(args, "to_chat_id")
    if old == new:
        raise ArgumentError("from_chat_id and to_chat_id must differ")
    with conn.transaction(), conn.cursor() as cur:
        moved = cur.execute("UPDATE messages SET chat_id = %s WHERE chat_id = %s", (new, old)).rowcount
        cur.execute("UPDATE feedback SET chat_id = %s WHERE chat_id = %s", (new, old))
        cur.execute(
            "INSERT INTO user_chats (telegram_user_id, chat_id, is_active, changed_at)"
            " SELECT telegram_user_id, %s, is_active, now() FROM user_chats WHERE chat_id = %s"
            " ON CONFLICT (telegram_user_id, chat_id) DO NOTHING",
            (new, old),
        )
        cur.execute("DELETE FROM user_chats WHERE chat_id = %s", (old,))
        cur.execute("UPDATE users SET chat_id = %s WHERE chat_id = %s", (new, old))
    return Updated(moved)


def upsert_user(conn: psycopg.Connection, arguments: Any) -> UserUpsert:
    args = require_object(arguments)
    user_id = _telegram_id(args, "telegram_user_id")
    chat_id = _telegram_id(args, "chat_id")
    fields = {name: optional_text(args, name, 256) for name in ("username", "first_name", "last_name")}
    language = optional_text(args, "language_code", 16)
    profile = args.get("profile")
    if profile is not None and not isinstance(profile, dict):
        raise ArgumentError("profile must be a JSON object")
    from psycopg.types.json import Jsonb

    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        row = first_row(
            cur.execute(
                "INSERT INTO users (telegram_user_id, chat_id, username, first_name, last_name, language_code, profile)"
                " VALUES (%(uid)s, %(chat)s, %(username)s, %(first_name)s, %(last_name)s, %(lang)s, %(profile)s)"
                " ON CONFLICT (telegram_user_id) DO UPDATE SET chat_id = EXCLUDED.chat_id,"
                " username = EXCLUDED.username, first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name,"
                " language_code = EXCLUDED.language_code, last_seen_at = now(), is_active = true,"
                " profile = users.profile || EXCLUDED.profile"
                " RETURNING telegram_user_id, chat_id, username, first_name, profile, is_active,"
                " (xmax = 0) AS created",
                {"uid": user_id, "chat": chat_id, **fields, "lang": language, "profile": Jsonb(profile or {})},
            )
        )
        # A message from this chat proves the bot can write there again (and only there).
        cur.execute(
            "INSERT INTO user_chats (telegram_user_id, chat_id) VALUES (%s, %s)"
            " ON CONFLICT (telegram_user_id, chat_id) DO UPDATE SET is_active = true,"
            " changed_at = CASE WHEN user_chats.is_active THEN user_chats.changed_at ELSE now() END",
            (user_id, chat_id),
        )
    user = StoredUser(
        **{k: row[k] for k in ("telegram_user_id", "chat_id", "username", "first_name", "is_active")},
        profile=dict(row["profile"] or {}),
    )
    return UserUpsert(user=user, created=row["created"])


def set_user_active(conn: psycopg.Connection, arguments: Any) -> Updated:
    """Mark a chat reachable or not: one (user, chat), every member of a chat, or every chat of a user.

    A private block or unblock (chat = the user) and a removal from a group (chat = the group) change
    only that chat's rows; users.is_active then says whether the user is reachable in any chat.
    """
    args = require_object(arguments)
    user_id = _telegram_id(args, "telegram_user_id", required=False)
    chat_id = _telegram_id(args, "chat_id", required=False)
    active = args.get("active")
    if not isinstance(active, bool):
        raise ArgumentError("active must be true or false")
    if user_id is None and chat_id is None:
        raise ArgumentError("telegram_user_id or chat_id is required")
    conditions = [
        (column, value) for column, value in (("telegram_user_id", user_id), ("chat_id", chat_id)) if value is not None
    ]
    where = " AND ".join(f"{column} = %s" for column, _ in conditions)  # column names are literals above
    values = [value for _, value in conditions]
    with conn.transaction(), conn.cursor() as cur:
        users = [
            row[0]
            for row in cur.execute(
                f"UPDATE user_chats SET is_active = %s, changed_at = now() WHERE {where}"  # nosec B608 - literal columns; values are bound
                " RETURNING telegram_user_id",
                (active, *values),
            ).fetchall()
        ]
        if users:
            cur.execute(
                "UPDATE users u SET is_active = EXISTS"
                " (SELECT 1 FROM user_chats c WHERE c.telegram_user_id = u.telegram_user_id AND c.is_active)"
                " WHERE u.telegram_user_id = ANY(%s)",
                (users,),
            )
    return Updated(len(users))


def chat_state(conn: psycopg.Connection, arguments: Any) -> ChatStates:
    """The (user, chat) rows of a user: which chats the bot can still write to."""
    user_id = _telegram_id(require_object(arguments), "telegram_user_id")
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT chat_id, is_active FROM user_chats WHERE telegram_user_id = %s ORDER BY chat_id", (user_id,)
        ).fetchall()
    return ChatStates([ChatState(chat_id=row["chat_id"], is_active=row["is_active"]) for row in rows])


def cache_photo(conn: psycopg.Connection, arguments: Any) -> Updated:
    args = require_object(arguments)
    wine_id = single_uuid(args, "wine_id")
    file_id = optional_text(args, "file_id", 256)
    if not file_id:
        raise ArgumentError("file_id is required")
    with conn.transaction():
        count = conn.execute("UPDATE wines SET telegram_file_id = %s WHERE id = %s", (file_id, wine_id)).rowcount
    return Updated(count)


def save_feedback(conn: psycopg.Connection, arguments: Any) -> FeedbackResult:
    args = require_object(arguments)
    chat_id = _telegram_id(args, "chat_id")
    user_id = _telegram_id(args, "user_id")
    message_id = args.get("message_id")
    if message_id is not None and (isinstance(message_id, bool) or not isinstance(message_id, int) or message_id < 1):
        raise ArgumentError("message_id must be a positive integer")
    rating = args.get("rating")
    if rating not in (-1, 1) or isinstance(rating, bool):
        raise ArgumentError("rating must be 1 (👍) or -1 (👎)")
    wine_id = single_uuid(args, "wine_id", required=False)
    with conn.transaction(), conn.cursor() as cur:
        if message_id is not None:
            exists = cur.execute(
                "SELECT 1 FROM messages WHERE id = %s AND chat_id = %s", (message_id, chat_id)
            ).fetchone()
            if not exists:
                message_id = None  # a stale button: keep the vote, drop the link
        if wine_id is not None and not cur.execute("SELECT 1 FROM wines WHERE id = %s", (wine_id,)).fetchone():
            wine_id = None  # a wine since removed from the catalogue: keep the vote
        if message_id is not None:
            # One vote per (user, answer): a second press replaces it, and the row keeps what it replaced.
            row = first_row(
                cur.execute(
                    "INSERT INTO feedback (chat_id, user_id, message_id, wine_id, rating) VALUES (%s, %s, %s, %s, %s)"
                    " ON CONFLICT (user_id, message_id) WHERE message_id IS NOT NULL DO UPDATE SET"
                    " previous_rating = feedback.rating, rating = EXCLUDED.rating, presses = feedback.presses + 1,"
                    " changed_at = CASE WHEN feedback.rating <> EXCLUDED.rating THEN now() ELSE feedback.changed_at END"
                    " RETURNING previous_rating, presses",
                    (chat_id, user_id, message_id, wine_id, rating),
                )
            )
            previous = row[0] if row[1] > 1 else None
            if (
                previous != rating and user_id is not None and chat_id is not None
            ):  # a first vote, or a changed one (learnt twice: the first undoes the old)
                shown = taste_sql.answer_wine_ids(conn, message_id, chat_id)
                note = TasteNote(liked=shown) if rating > 0 else TasteNote(disliked=shown)
                for _ in range(1 if previous is None else 2):
                    taste_sql.learn(conn, user_id, note)
            return FeedbackResult(
                saved=True, rating=rating, previous_rating=previous, changed=previous not in (None, rating)
            )
        cur.execute(
            "INSERT INTO feedback (chat_id, user_id, wine_id, rating) VALUES (%s, %s, %s, %s)",
            (chat_id, user_id, wine_id, rating),
        )
    return FeedbackResult(saved=True, rating=rating, previous_rating=None, changed=False)


# ---------------------------------------------------------------------------
# The two operations that bracket a conversation turn, so a turn costs few tool-function invocations.
#
# begin_turn: upsert the user and load the history. end_turn: write the photo ids learned since the
# last turn, save the turn, and return the wines the answer shows (with their cached photo ids).
# ---------------------------------------------------------------------------

MAX_PHOTOS = 50


def begin_turn(conn: psycopg.Connection, arguments: Any) -> TurnStart:
    args = require_object(arguments)
    upsert = upsert_user(conn, args["user"]) if args.get("user") is not None else None
    history = load_history(conn, {"chat_id": args.get("chat_id"), "limit": args.get("history_limit")})
    shop = load_facts(conn)
    if upsert is None:
        return TurnStart(user=None, history=history.messages, shop=shop)
    taste = taste_sql.load(conn, upsert.user.telegram_user_id)
    return TurnStart(user=upsert.user, history=history.messages, created=upsert.created, shop=shop, taste=taste)


MAX_SEARCHES = 8  # as run_tools


def open_turn(conn: psycopg.Connection, arguments: Any) -> TurnOpening:
    """begin_turn, then the prefetch's searches in the same invocation, each answering on its own (a search
    that fails is its error, inside a savepoint: the turn's beginning stays)."""
    from sommelier.domain import wire
    from sommelier.toolfn import search

    args = require_object(arguments)
    calls = args.get("calls") or []
    if not isinstance(calls, list) or len(calls) > MAX_SEARCHES:
        raise ArgumentError(f"calls must be a list of at most {MAX_SEARCHES} search calls")
    start = begin_turn(conn, args)
    tools = {wire.SEARCH_WINES.name: search.search_wines_tool, wire.SEMANTIC_SEARCH.name: search.semantic_search_tool}
    results: list[Any] = []
    for call in calls:
        name = call.get("tool") if isinstance(call, dict) else None
        tool = tools.get(name) if isinstance(name, str) else None
        if tool is None:
            results.append(NotFound(f"open_turn runs only {', '.join(wire.LLM_TOOLS)}").as_payload())
            continue
        try:
            with conn.transaction():  # a savepoint: a failed search does not undo the turn's beginning
                results.append(tool(conn, call.get("arguments") or {}))
        except PortError as exc:
            results.append(exc.as_payload())
        except ModelMismatchError as exc:
            results.append(InvalidArgument(str(exc)).as_payload())
        except psycopg.errors.DataError as exc:
            results.append(InvalidArgument(f"{name}: invalid value ({exc.diag.message_primary})").as_payload())
    return TurnOpening.of(start, results)


def end_turn(conn: psycopg.Connection, arguments: Any) -> TurnEnd:
    args = require_object(arguments)
    photos = args.get("photos") or []
    if not isinstance(photos, list) or len(photos) > MAX_PHOTOS:
        raise ArgumentError(f"photos must be a list of at most {MAX_PHOTOS} {{wine_id, file_id}} objects")
    cached = 0
    for photo in photos:
        try:
            cached += cache_photo(conn, photo).updated
        except ArgumentError:
            continue  # a bad cache entry is only a missed shortcut; the turn goes on
    saved = save_turn(conn, args["turn"]) if args.get("turn") is not None else None
    wines = catalog_sql.get_wines(conn, {"ids": args.get("wine_ids") or []})
    return TurnEnd(saved=saved, wines=wines.wines, missing=wines.missing, photos_cached=cached)
