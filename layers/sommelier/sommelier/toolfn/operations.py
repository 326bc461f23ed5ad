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
from sommelier.domain.errors import InvalidArgument, Unavailable
from sommelier.domain.search import search_filters, semantic_request
from sommelier.embeddings.port import ModelMismatchError
from sommelier.toolfn import catalog_sql, chat_sql, search, shop_sql

logger = logging.getLogger(__name__)

Operation = Callable[[psycopg.Connection, Any], dict[str, Any]]

LLM_OPERATIONS: dict[str, Operation] = {
    "search_wines": lambda conn, args: search.search_wines(conn, search_filters(args)),
    "semantic_search": lambda conn, args: search.semantic_search(conn, semantic_request(args)),
}

OPERATIONS: dict[str, Operation] = {
    **LLM_OPERATIONS,
    "begin_turn": chat_sql.begin_turn,
    "end_turn": chat_sql.end_turn,
    "get_wines": catalog_sql.get_wines,
    "get_list": catalog_sql.get_list,
    "load_history": chat_sql.load_history,
    "save_turn": chat_sql.save_turn,
    "reset_history": chat_sql.reset_history,
    "upsert_user": chat_sql.upsert_user,
    "set_user_active": chat_sql.set_user_active,
    "chat_state": chat_sql.chat_state,
    "cache_photo": chat_sql.cache_photo,
    "save_feedback": chat_sql.save_feedback,
    "catalog_stats": catalog_sql.catalog_stats,
    "export_wines": catalog_sql.export_wines,
    "list_wines": catalog_sql.list_wines,
    "import_wines": catalog_sql.import_wines,
    "update_embeddings": catalog_sql.update_embeddings,
    "embedding_texts": catalog_sql.embedding_texts,
    **shop_sql.OPERATIONS,
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
