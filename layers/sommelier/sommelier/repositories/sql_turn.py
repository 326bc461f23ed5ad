"""The two operations that bracket a conversation turn, so a turn costs few tool-function invocations.

begin_turn: upsert the user and load the history. end_turn: write the photo ids learned since the
last turn, save the turn, and return the wines the answer shows (with their cached photo ids).
"""

from __future__ import annotations

from typing import Any

import psycopg

from sommelier.repositories import sql_catalog, sql_chat
from sommelier.tools.arguments import ArgumentError, require_object

MAX_PHOTOS = 50


def begin_turn(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
    args = require_object(arguments)
    result: dict[str, Any] = {"user": None, "created": False}
    if args.get("user") is not None:
        result.update(sql_chat.upsert_user(conn, args["user"]))
    history = sql_chat.load_history(conn, {"chat_id": args.get("chat_id"), "limit": args.get("history_limit")})
    result["messages"] = history["messages"]
    return result


def end_turn(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
    args = require_object(arguments)
    photos = args.get("photos") or []
    if not isinstance(photos, list) or len(photos) > MAX_PHOTOS:
        raise ArgumentError(f"photos must be a list of at most {MAX_PHOTOS} {{wine_id, file_id}} objects")
    cached = 0
    for photo in photos:
        try:
            cached += sql_chat.cache_photo(conn, photo)["updated"]
        except ArgumentError:
            continue  # a bad cache entry is only a missed shortcut; the turn goes on
    saved = sql_chat.save_turn(conn, args["turn"]) if args.get("turn") is not None else None
    wines = sql_catalog.get_wines(conn, {"ids": args.get("wine_ids") or []})
    return {"saved": saved, "photos_cached": cached, **wines}
