"""Data operations of the shop's duties: the age answer, forgetting a customer, message
retention, wine cards for deep links, and the figures of the weekly report.

Same contract as chat_sql and catalog_sql: validated JSON arguments in, a domain object out (its JSON: domain.wire).
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg.rows import dict_row

from sommelier.db.pool import first_row
from sommelier.domain.search import ArgumentError, optional_text, require_object
from sommelier.domain.shop import (
    AdminStats,
    AgeAnswer,
    AskedQuery,
    Deleted,
    ForgetResult,
    FoundWines,
    ModeFigures,
    ReportData,
    Saved,
    ShelfWine,
    WineCard,
    WineVotes,
)
from sommelier.toolfn.chat_sql import _telegram_id
from sommelier.toolfn.search import TYPICAL_PRICE_ORDER, WINE_COLUMNS, full_wine

MAX_RETENTION_DAYS = 3650
MAX_REPORT_QUERIES = 5000
MAX_REFS = 200
SIMILAR_WINES = 2
ALTERNATIVES = 3


# --------------------------------------------------------------------------- age gate
def get_age_answer(conn: psycopg.Connection, arguments: Any) -> AgeAnswer:
    user_id = _telegram_id(require_object(arguments), "telegram_user_id")
    row = conn.execute("SELECT is_adult FROM age_answers WHERE telegram_user_id = %s", (user_id,)).fetchone()
    return AgeAnswer(row[0] if row else None)


def save_age_answer(conn: psycopg.Connection, arguments: Any) -> Saved:
    args = require_object(arguments)
    user_id = _telegram_id(args, "telegram_user_id")
    is_adult = args.get("is_adult")
    if not isinstance(is_adult, bool):
        raise ArgumentError("is_adult must be true or false")
    with conn.transaction():
        conn.execute(
            "INSERT INTO age_answers (telegram_user_id, is_adult) VALUES (%s, %s)"
            " ON CONFLICT (telegram_user_id) DO UPDATE SET is_adult = EXCLUDED.is_adult, answered_at = now()",
            (user_id, is_adult),
        )
    return Saved(True)


# --------------------------------------------------------------------------- privacy
def forget_user(conn: psycopg.Connection, arguments: Any) -> ForgetResult:
    """Delete everything kept about one Telegram user: messages, votes, profile, taste, age answer, user row.

    In a private chat the chat id is the user's id, so that chat's messages go too.
    """
    user_id = _telegram_id(require_object(arguments), "telegram_user_id")
    deleted: dict[str, int] = {}
    with conn.transaction(), conn.cursor() as cur:
        deleted["feedback"] = cur.execute(
            "DELETE FROM feedback WHERE user_id = %(u)s OR chat_id = %(u)s", {"u": user_id}
        ).rowcount
        deleted["messages"] = cur.execute(
            "DELETE FROM messages WHERE user_id = %(u)s OR chat_id = %(u)s", {"u": user_id}
        ).rowcount
        deleted["age_answers"] = cur.execute("DELETE FROM age_answers WHERE telegram_user_id = %s", (user_id,)).rowcount
        deleted["taste_profiles"] = cur.execute(
            "DELETE FROM taste_profiles WHERE telegram_user_id = %s", (user_id,)
        ).rowcount
        deleted["users"] = cur.execute(
            "DELETE FROM users WHERE telegram_user_id = %(u)s OR chat_id = %(u)s", {"u": user_id}
        ).rowcount
    return ForgetResult(deleted)


def purge_old_messages(conn: psycopg.Connection, arguments: Any) -> Deleted:
    """Delete messages older than ``days`` (the retention period). Votes keep their counts, unlinked."""
    args = require_object(arguments)
    days = args.get("days")
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_RETENTION_DAYS:
        raise ArgumentError(f"days must be an integer from 1 to {MAX_RETENTION_DAYS}")
    with conn.transaction():
        count = conn.execute(
            "DELETE FROM messages WHERE created_at < now() - make_interval(days => %s)", (days,)
        ).rowcount
    return Deleted(deleted=count, days=days)


# --------------------------------------------------------------------------- wine cards
def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _find_by_ref(cur: psycopg.Cursor[dict[str, Any]], ref: str) -> dict[str, Any] | None:
    """A wine by its catalogue id, else by the shop's sku (migration 0004)."""
    if _is_uuid(ref):
        row = cur.execute(f"SELECT {WINE_COLUMNS} FROM wines w WHERE w.id = %s", (ref,)).fetchone()  # nosec B608 - constant column list
        if row:
            return row
    return cur.execute(f"SELECT {WINE_COLUMNS} FROM wines w WHERE w.sku = %s", (ref,)).fetchone()  # nosec B608 - constant column list


def _refs(args: dict[str, Any]) -> list[str]:
    refs = args.get("refs")
    if not isinstance(refs, list) or not refs or len(refs) > MAX_REFS:
        raise ArgumentError(f"refs must be a list of 1-{MAX_REFS} skus or wine ids")
    if not all(isinstance(r, str) and 0 < len(r.strip()) <= 100 for r in refs):
        raise ArgumentError("each ref must be a sku or a wine id (1-100 characters)")
    return [r.strip() for r in refs]


def find_wines(conn: psycopg.Connection, arguments: Any) -> FoundWines:
    """Wines by sku or id, in the order asked; refs that match nothing are listed in `missing`."""
    refs = _refs(require_object(arguments))
    found: list[ShelfWine] = []
    missing: list[str] = []
    with conn.cursor(row_factory=dict_row) as cur:
        for ref in refs:
            row = _find_by_ref(cur, ref)
            if row is None:
                missing.append(ref)
            else:
                found.append(ShelfWine(ref=ref, wine=full_wine(row)))
    return FoundWines(wines=found, missing=missing)


def _similar(cur: psycopg.Cursor[dict[str, Any]], row: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    """Available wines nearest by embedding (same model), else of the same type nearest in price."""
    similar = cur.execute(
        f"SELECT {WINE_COLUMNS} FROM wines w, wines me WHERE me.id = %(id)s AND w.id <> me.id AND w.available"  # nosec B608 - constant column list
        " AND me.embedding IS NOT NULL AND w.embedding_model = me.embedding_model"
        " ORDER BY w.embedding <=> me.embedding LIMIT %(limit)s",
        {"id": row["id"], "limit": limit},
    ).fetchall()
    if len(similar) < limit:
        taken = [row["id"], *[r["id"] for r in similar]]
        similar += cur.execute(
            f"SELECT {WINE_COLUMNS} FROM wines w WHERE w.available AND w.wine_type = %(type)s"  # nosec B608 - constant column list
            " AND NOT (w.id = ANY(%(taken)s))"
            " ORDER BY abs(w.price_rub - %(price)s), w.id LIMIT %(limit)s",
            {"type": row["wine_type"], "taken": taken, "price": row["price_rub"], "limit": limit - len(similar)},
        ).fetchall()
    return similar


def _alternatives(cur: psycopg.Cursor[dict[str, Any]], ref: str, limit: int) -> list[dict[str, Any]]:
    """For an unknown ref: wines whose name or producer contains a word of it, else typical picks."""
    words = [w for w in re.split(r"[^0-9A-Za-zА-Яа-яЁё]+", ref) if len(w) >= 3 and not w.isdigit()]
    rows: list[dict[str, Any]] = []
    if words:
        patterns = [f"%{w}%" for w in words[:5]]
        rows = cur.execute(
            f"SELECT {WINE_COLUMNS} FROM wines w WHERE w.available"  # nosec B608 - constant column list
            " AND (w.name ILIKE ANY(%(p)s) OR w.producer ILIKE ANY(%(p)s))"
            f" ORDER BY {TYPICAL_PRICE_ORDER}, w.id LIMIT %(limit)s",
            {"p": patterns, "limit": limit},
        ).fetchall()
    if len(rows) < limit:
        taken = [r["id"] for r in rows]
        rows += cur.execute(
            f"SELECT {WINE_COLUMNS} FROM wines w WHERE w.available AND NOT (w.id = ANY(%(taken)s::uuid[]))"  # nosec B608 - constant column list
            f" ORDER BY {TYPICAL_PRICE_ORDER}, w.id LIMIT %(limit)s",
            {"taken": taken, "limit": limit - len(rows)},
        ).fetchall()
    return rows


def wine_card(conn: psycopg.Connection, arguments: Any) -> WineCard:
    """One wine by sku or id with two similar wines. An unknown ref, or a wine no longer available, gets the
    closest available alternatives instead (for a known wine: the most similar ones)."""
    args = require_object(arguments)
    ref = optional_text(args, "ref", 100)
    if not ref:
        raise ArgumentError("ref (a sku or a wine id) is required")
    with conn.cursor(row_factory=dict_row) as cur:
        row = _find_by_ref(cur, ref)
        if row is None:
            return WineCard(wine=None, alternatives=[full_wine(r) for r in _alternatives(cur, ref, ALTERNATIVES)])
        if not row["available"]:
            return WineCard(
                wine=None,
                unavailable=full_wine(row),
                alternatives=[full_wine(r) for r in _similar(cur, row, ALTERNATIVES)],
            )
        return WineCard(wine=full_wine(row), similar=[full_wine(r) for r in _similar(cur, row, SIMILAR_WINES)])


# --------------------------------------------------------------------------- the weekly report
def _instant(args: dict[str, Any], name: str) -> datetime:
    value = args.get(name)
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be an ISO 8601 timestamp with a time zone")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ArgumentError(f"{name} must be an ISO 8601 timestamp with a time zone") from exc
    if moment.tzinfo is None:
        raise ArgumentError(f"{name} must carry a time zone (e.g. 2026-01-05T00:00:00+00:00)")
    return moment


def report_data(conn: psycopg.Connection, arguments: Any) -> ReportData:
    """Raw figures for [since, until): turns by mode and tokens, customers, votes per wine, and what was asked."""
    args = require_object(arguments)
    since, until = _instant(args, "since"), _instant(args, "until")
    if not since < until or until - since > timedelta(days=366):
        raise ArgumentError("since must be before until, at most a year apart")
    window = {"since": since, "until": until}
    with conn.cursor(row_factory=dict_row) as cur:
        modes = cur.execute(
            "SELECT mode, count(*) AS turns, sum(llm_calls) AS llm_calls, sum(prompt_tokens) AS prompt_tokens,"
            " sum(completion_tokens) AS completion_tokens FROM turn_stats"
            " WHERE created_at >= %(since)s AND created_at < %(until)s GROUP BY mode ORDER BY mode",
            window,
        ).fetchall()
        customers = first_row(
            cur.execute(
                "SELECT count(DISTINCT coalesce(user_id, chat_id)) AS n FROM messages"
                " WHERE role = 'user' AND created_at >= %(since)s AND created_at < %(until)s",
                window,
            )
        )["n"]
        # A vote rates the answer: it counts for every wine that answer showed (or the wine it names).
        votes = cur.execute(
            "WITH rated AS ("
            "  SELECT f.rating, coalesce(f.wine_id, shown.wine_id) AS wine_id FROM feedback f"
            "  LEFT JOIN messages m ON m.id = f.message_id"
            "  LEFT JOIN LATERAL unnest(CASE WHEN f.wine_id IS NULL THEN m.wine_ids END) AS shown(wine_id) ON true"
            "  WHERE f.created_at >= %(since)s AND f.created_at < %(until)s)"
            " SELECT w.id, w.name, w.producer, w.vintage_year,"
            " count(*) FILTER (WHERE r.rating = 1) AS up, count(*) FILTER (WHERE r.rating = -1) AS down"
            " FROM rated r JOIN wines w ON w.id = r.wine_id GROUP BY w.id ORDER BY up DESC, down DESC, w.name",
            window,
        ).fetchall()
        queries = cur.execute(
            "SELECT u.content AS text, coalesce(cardinality(a.wine_ids), 0) AS wines_shown, a.response_type"
            " FROM messages u LEFT JOIN LATERAL ("
            "   SELECT wine_ids, response_type FROM messages a WHERE a.chat_id = u.chat_id AND a.role = 'assistant'"
            "   AND a.id > u.id ORDER BY a.id LIMIT 1) a ON true"
            " WHERE u.role = 'user' AND u.created_at >= %(since)s AND u.created_at < %(until)s"
            " ORDER BY u.id DESC LIMIT %(limit)s",
            {**window, "limit": MAX_REPORT_QUERIES},
        ).fetchall()
    return ReportData(
        since=since.isoformat(),
        until=until.isoformat(),
        modes=[
            ModeFigures(
                mode=str(row["mode"]),
                turns=int(row["turns"]),
                llm_calls=int(row["llm_calls"]),
                prompt_tokens=int(row["prompt_tokens"]),
                completion_tokens=int(row["completion_tokens"]),
            )
            for row in modes
        ],
        customers=int(customers),
        votes=[
            WineVotes(
                wine_id=str(v["id"]),
                name=v["name"],
                producer=v["producer"],
                vintage_year=v["vintage_year"],
                up=int(v["up"]),
                down=int(v["down"]),
            )
            for v in votes
        ],
        queries=[AskedQuery(**q) for q in queries],
    )


def admin_stats(conn: psycopg.Connection, arguments: Any) -> AdminStats:
    """Totals for /stats: customers, turns today and in 7 days, votes, wines, the LLM tokens of 7 days."""
    require_object(arguments)
    row = first_row(
        conn.execute(
            "SELECT (SELECT count(*) FROM users),"
            " (SELECT count(*) FROM turn_stats WHERE created_at >= date_trunc('day', now())),"
            " (SELECT count(*) FROM turn_stats WHERE created_at >= now() - interval '7 days'),"
            " (SELECT count(*) FILTER (WHERE rating = 1) FROM feedback WHERE created_at >= now() - interval '7 days'),"
            " (SELECT count(*) FILTER (WHERE rating = -1) FROM feedback WHERE created_at >= now() - interval '7 days'),"
            " (SELECT count(*) FROM wines),"
            " (SELECT coalesce(sum(prompt_tokens), 0) FROM turn_stats WHERE created_at >= now() - interval '7 days'),"
            " (SELECT coalesce(sum(completion_tokens), 0) FROM turn_stats"
            "  WHERE created_at >= now() - interval '7 days')"
        )
    )
    keys = (
        "customers",
        "turns_today",
        "turns_7d",
        "likes_7d",
        "dislikes_7d",
        "wines",
        "prompt_tokens_7d",
        "completion_tokens_7d",
    )
    return AdminStats(**dict(zip(keys, (int(x) for x in row), strict=True)))
