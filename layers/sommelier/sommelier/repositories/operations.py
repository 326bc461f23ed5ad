"""Every operation of the tool function by name, and how one runs against PostgreSQL.

`run_operation` is shared by the tool function (tools/handler.py, which answers JSON) and the
in-process adapter (which raises): database failures become port errors in one place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import psycopg

from sommelier.db.pool import Database, default_database, refresh_default_database
from sommelier.embeddings.port import ModelMismatchError
from sommelier.repositories import sql_catalog, sql_chat, sql_shop, sql_turn
from sommelier.repositories.errors import InvalidArgument, Unavailable
from sommelier.tools import search
from sommelier.tools.arguments import search_filters, semantic_request

logger = logging.getLogger(__name__)

Operation = Callable[[psycopg.Connection, Any], dict[str, Any]]

LLM_OPERATIONS: dict[str, Operation] = {
    "search_wines": lambda conn, args: search.search_wines(conn, search_filters(args)),
    "semantic_search": lambda conn, args: search.semantic_search(conn, semantic_request(args)),
}

OPERATIONS: dict[str, Operation] = {
    **LLM_OPERATIONS,
    "begin_turn": sql_turn.begin_turn,
    "end_turn": sql_turn.end_turn,
    "get_wines": sql_catalog.get_wines,
    "get_list": sql_catalog.get_list,
    "load_history": sql_chat.load_history,
    "save_turn": sql_chat.save_turn,
    "reset_history": sql_chat.reset_history,
    "upsert_user": sql_chat.upsert_user,
    "set_user_active": sql_chat.set_user_active,
    "chat_state": sql_chat.chat_state,
    "cache_photo": sql_chat.cache_photo,
    "save_feedback": sql_chat.save_feedback,
    "catalog_stats": sql_catalog.catalog_stats,
    "export_wines": sql_catalog.export_wines,
    "list_wines": sql_catalog.list_wines,
    "import_wines": sql_catalog.import_wines,
    "update_embeddings": sql_catalog.update_embeddings,
    "embedding_texts": sql_catalog.embedding_texts,
    **sql_shop.OPERATIONS,
}


def run_operation(database: Database | None, name: str, arguments: Any) -> dict[str, Any]:
    """Run one named operation on a pooled connection; database failures raise port errors."""
    try:
        db = database or default_database()
        with db.connection() as conn:
            return OPERATIONS[name](conn, arguments)
    except ModelMismatchError as exc:
        raise InvalidArgument(str(exc)) from exc
    except psycopg.errors.CheckViolation as exc:
        raise InvalidArgument(f"{name}: a value is out of the allowed range ({exc.diag.constraint_name})") from exc
    except psycopg.errors.DataError as exc:
        raise InvalidArgument(f"{name}: invalid value ({exc.diag.message_primary})") from exc
    except (psycopg.OperationalError, psycopg.errors.QueryCanceled) as exc:
        logger.warning("database unavailable for %s: %s", name, exc)
        if database is None and isinstance(exc, psycopg.OperationalError):
            _refresh_credentials()
        raise Unavailable("the wine database is temporarily unavailable; try again shortly") from exc


def _refresh_credentials() -> None:
    """A changed database password makes every new connection fail until the secret is read again."""
    try:
        if refresh_default_database():
            logger.warning("the database secret changed; reconnecting with the new credentials")
    except Exception as exc:  # the answer is already an error; this is a best effort for the next call
        logger.warning("could not re-read the database secret: %s", type(exc).__name__)
