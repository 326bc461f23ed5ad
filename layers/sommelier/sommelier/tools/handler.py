"""The tool function's contract: {"tool": name, "arguments": {...}} → a JSON object. Never raises."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import psycopg

from sommelier.db.pool import Database, default_database, refresh_default_database
from sommelier.embeddings.port import ModelMismatchError
from sommelier.tools import data_ops, search, shop_ops
from sommelier.tools.arguments import ArgumentError, search_filters, semantic_request

logger = logging.getLogger(__name__)

MAX_EVENT_BYTES = 5_000_000  # Lambda's synchronous payload limit is 6 MB

Operation = Callable[[psycopg.Connection, Any], dict[str, Any]]

OPERATIONS: dict[str, Operation] = {
    "search_wines": lambda conn, args: search.search_wines(conn, search_filters(args)),
    "semantic_search": lambda conn, args: search.semantic_search(conn, semantic_request(args)),
    "get_wines": data_ops.get_wines,
    "get_list": data_ops.get_list,
    "load_history": data_ops.load_history,
    "save_turn": data_ops.save_turn,
    "reset_history": data_ops.reset_history,
    "upsert_user": data_ops.upsert_user,
    "set_user_active": data_ops.set_user_active,
    "chat_state": data_ops.chat_state,
    "cache_photo": data_ops.cache_photo,
    "save_feedback": data_ops.save_feedback,
    "catalog_stats": data_ops.catalog_stats,
    "export_wines": data_ops.export_wines,
    "list_wines": data_ops.list_wines,
    "import_wines": data_ops.import_wines,
    "update_embeddings": data_ops.update_embeddings,
    "embedding_texts": data_ops.embedding_texts,
    **shop_ops.OPERATIONS,
}


def _decode(event: Any) -> tuple[str, Any]:
    if isinstance(event, (str, bytes)):
        if len(event) > MAX_EVENT_BYTES:
            raise ArgumentError("the request is too large")
        try:
            event = json.loads(event)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: absurd nesting
            raise ArgumentError("the request is not valid JSON") from exc
    if not isinstance(event, dict):
        raise ArgumentError('the request must be an object: {"tool": "<name>", "arguments": {...}}')
    name = event.get("tool")
    if not isinstance(name, str) or name not in OPERATIONS:
        known = ", ".join(sorted(OPERATIONS))
        shown = name[:60] if isinstance(name, str) else name
        raise ArgumentError(f"unknown tool {shown!r}; known tools: {known}")
    arguments = event.get("arguments", {})
    if isinstance(arguments, str):  # LLMs send arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            raise ArgumentError("arguments is not valid JSON") from exc
    return name, arguments


def handle(event: Any, database: Database | None = None) -> dict[str, Any]:
    """Run one tool call. Bad input and failures answer {"error": ...}; nothing raises."""
    try:
        name, arguments = _decode(event)
    except ArgumentError as exc:
        return {"error": str(exc)}
    try:
        db = database or default_database()
        with db.connection() as conn:
            return OPERATIONS[name](conn, arguments)
    except (ArgumentError, ModelMismatchError) as exc:
        return {"error": str(exc)}
    except psycopg.errors.CheckViolation as exc:
        return {"error": f"{name}: a value is out of the allowed range ({exc.diag.constraint_name})"}
    except psycopg.errors.DataError as exc:
        return {"error": f"{name}: invalid value ({exc.diag.message_primary})"}
    except (psycopg.OperationalError, psycopg.errors.QueryCanceled) as exc:
        logger.warning("database unavailable for %s: %s", name, exc)
        if database is None and isinstance(exc, psycopg.OperationalError):
            _refresh_credentials()
        return {"error": "the wine database is temporarily unavailable; try again shortly", "retryable": True}
    except Exception:  # the contract: the caller always gets JSON
        logger.exception("tool %s failed", name)
        return {"error": f"{name} failed because of an internal error"}


def _refresh_credentials() -> None:
    """A changed database password makes every new connection fail until the secret is read again."""
    try:
        if refresh_default_database():
            logger.warning("the database secret changed; reconnecting with the new credentials")
    except Exception as exc:  # the answer is already an error; this is a best effort for the next call
        logger.warning("could not re-read the database secret: %s", type(exc).__name__)
