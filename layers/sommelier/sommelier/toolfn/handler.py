"""The tool function: every operation's implementation (the operations: domain/wire.py), how one runs against
PostgreSQL, and the contract: {"tool": name, "arguments": {...}} → a JSON object. Never raises, except for
a scheduled job ({"scheduled": true}, the nightly purge), whose failure must reach Lambda's retries and its
failure destination (template.yaml: JobFailureQueue and its alarm) instead of a JSON answer nobody reads.

`run_operation` is shared by the Lambda contract (`handle`, which answers JSON) and the in-process adapter
(which raises): database failures become port errors in one place. Failures answer {"error": ...} (plus
"retryable" or "not_found"), the wire form of the port errors. `run_tools` runs several LLM tool calls in
one invocation: {"calls": [{"tool", "arguments"}, ...]}.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from functools import cache
from typing import Any, TypeAlias, TypeVar

import psycopg

from sommelier.db.pool import Database
from sommelier.domain import wire
from sommelier.domain.errors import (
    ArgumentError,
    InvalidArgument,
    ModelMismatchError,
    NotFound,
    PortError,
    Unavailable,
)
from sommelier.domain.wire import LLM_TOOLS, OPERATIONS, RUN_TOOLS, Operation, require_object, to_wire
from sommelier.settings import SettingError, Settings

logger = logging.getLogger(__name__)
T = TypeVar("T")

# (connection, JSON arguments) -> the domain object the operation answers
Implementation: TypeAlias = Callable[[psycopg.Connection, Any], T]
Implementations: TypeAlias = dict[Operation[..., Any], Implementation[Any]]


def _served(
    operation: Operation[..., T], implementation: Implementation[T]
) -> tuple[Operation[..., Any], Implementation[Any]]:
    """One operation and the function that runs it: mypy checks that it answers what the operation answers."""
    return operation, implementation


# Every operation's implementation, by the SQL module it lives in. A module's table is built when an
# operation is first looked up in it: a cold start loads only the SQL (and the domain types) it runs.


@cache
def _search() -> Implementations:
    from sommelier.toolfn import search

    return dict(
        (
            _served(wire.SEARCH_WINES, search.search_wines_tool),
            _served(wire.SEMANTIC_SEARCH, search.semantic_search_tool),
        )
    )


@cache
def _catalog() -> Implementations:
    from sommelier.toolfn import catalog_sql

    return dict(
        (
            _served(wire.GET_WINES, catalog_sql.get_wines),
            _served(wire.GET_LIST, catalog_sql.get_list),
            _served(wire.CATALOG_STATS, catalog_sql.catalog_stats),
            _served(wire.EXPORT_WINES, catalog_sql.export_wines),
            _served(wire.LIST_WINES, catalog_sql.list_wines),
            _served(wire.IMPORT_WINES, catalog_sql.import_wines),
            _served(wire.UPDATE_EMBEDDINGS, catalog_sql.update_embeddings),
            _served(wire.EMBEDDING_TEXTS, catalog_sql.embedding_texts),
        )
    )


@cache
def _chat() -> Implementations:
    from sommelier.toolfn import chat_sql, taste_sql

    return dict(
        (
            _served(wire.BEGIN_TURN, chat_sql.begin_turn),
            _served(wire.OPEN_TURN, chat_sql.open_turn),
            _served(wire.END_TURN, chat_sql.end_turn),
            _served(wire.LOAD_HISTORY, chat_sql.load_history),
            _served(wire.SAVE_TURN, chat_sql.save_turn),
            _served(wire.RESET_HISTORY, chat_sql.reset_history),
            _served(wire.MOVE_CHAT, chat_sql.move_chat),
            _served(wire.UPSERT_USER, chat_sql.upsert_user),
            _served(wire.SET_USER_ACTIVE, chat_sql.set_user_active),
            _served(wire.CHAT_STATE, chat_sql.chat_state),
            _served(wire.CACHE_PHOTO, chat_sql.cache_photo),
            _served(wire.SAVE_FEEDBACK, chat_sql.save_feedback),
            _served(wire.TASTE_PROFILE, taste_sql.taste_profile),
        )
    )


@cache
def _shop() -> Implementations:
    from sommelier.toolfn import facts_sql, shop_sql

    return dict(
        (
            _served(wire.GET_AGE_ANSWER, shop_sql.get_age_answer),
            _served(wire.SAVE_AGE_ANSWER, shop_sql.save_age_answer),
            _served(wire.FORGET_USER, shop_sql.forget_user),
            _served(wire.PURGE_OLD_MESSAGES, shop_sql.purge_old_messages),
            _served(wire.FIND_WINES, shop_sql.find_wines),
            _served(wire.WINE_CARD, shop_sql.wine_card),
            _served(wire.REPORT_DATA, shop_sql.report_data),
            _served(wire.ADMIN_STATS, shop_sql.admin_stats),
            _served(wire.GET_SHOP_FACTS, facts_sql.get_shop_facts),
            _served(wire.PUT_SHOP_FACTS, facts_sql.put_shop_facts),
        )
    )


# Looked through in the order the modules import one another (catalog_sql imports search, chat_sql imports
# catalog_sql, shop_sql imports chat_sql), so finding an operation loads nothing its own module does not.
SQL_MODULES: tuple[Callable[[], Implementations], ...] = (_search, _catalog, _chat, _shop)


def implementation(operation: Operation[..., T]) -> Implementation[T]:
    for table in SQL_MODULES:
        found = table().get(operation)
        if found is not None:
            return found
    raise KeyError(operation.name)


def run_operation(database: Database, operation: Operation[..., T], arguments: Any) -> T:
    """Run one operation on a pooled connection; database failures raise port errors."""
    name = operation.name
    try:
        with database.connection() as conn:
            answer: T = implementation(operation)(conn, arguments)
            return answer
    except ModelMismatchError as exc:
        raise InvalidArgument(str(exc)) from exc
    except psycopg.errors.CheckViolation as exc:
        raise InvalidArgument(f"{name}: a value is out of the allowed range ({exc.diag.constraint_name})") from exc
    except psycopg.errors.DataError as exc:
        raise InvalidArgument(f"{name}: invalid value ({exc.diag.message_primary})") from exc
    except (psycopg.OperationalError, psycopg.errors.QueryCanceled) as exc:
        logger.warning("database unavailable for %s: %s", name, exc)
        if isinstance(exc, psycopg.OperationalError):
            _refresh_credentials(database)
        raise Unavailable("the wine database is temporarily unavailable; try again shortly") from exc


def _refresh_credentials(database: Database) -> None:
    """A changed database password makes every new connection fail until the secret is read again."""
    try:
        if database.refresh():
            logger.warning("the database secret changed; reconnecting with the new credentials")
    except Exception as exc:  # the answer is already an error; this is a best effort for the next call
        logger.warning("could not re-read the database secret: %s", type(exc).__name__)


MAX_EVENT_BYTES = 5_000_000  # Lambda's synchronous payload limit is 6 MB
MAX_BATCH = 8
BATCH = RUN_TOOLS
KNOWN = sorted([*OPERATIONS, BATCH])  # the names an event may give


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
    if not isinstance(name, str) or name not in KNOWN:
        shown = name[:60] if isinstance(name, str) else name
        raise NotFound(f"unknown tool {shown!r}; known tools: {', '.join(KNOWN)}")
    arguments = event.get("arguments", {})
    if isinstance(arguments, str):  # LLMs send arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            raise ArgumentError("arguments is not valid JSON") from exc
    return name, arguments


def handle(event: Any, database: Database) -> dict[str, Any]:
    """Run one tool call (or a batch of LLM tool calls). Bad input and failures answer {"error": ...}."""
    try:
        name, arguments = _decode(event)
    except PortError as exc:
        return exc.as_payload()
    if name == BATCH:
        return _batch(arguments, database)
    return _run(name, arguments, database)


def _run(name: str, arguments: Any, database: Database) -> dict[str, Any]:
    try:
        answer: dict[str, Any] = to_wire(run_operation(database, OPERATIONS[name], arguments))
        return answer
    except PortError as exc:
        return exc.as_payload()
    except Exception:  # the contract: the caller always gets JSON
        logger.exception("tool %s failed", name)
        return {"error": f"{name} failed because of an internal error", "internal": True}


def _batch(arguments: Any, database: Database) -> dict[str, Any]:
    """Each call answers on its own: one failed search doesn't fail the others."""
    try:
        calls = require_object(arguments).get("calls")
        if not isinstance(calls, list) or not 0 < len(calls) <= MAX_BATCH:
            raise ArgumentError(f"calls must be a list of 1 to {MAX_BATCH} LLM tool calls")
    except PortError as exc:
        return exc.as_payload()
    results = []
    for call in calls:
        name = call.get("tool") if isinstance(call, dict) else None
        if name not in LLM_TOOLS:
            results.append(NotFound(f"run_tools runs only {', '.join(LLM_TOOLS)}").as_payload())
            continue
        results.append(_run(name, call.get("arguments", {}), database))
    return {"results": results}


class ScheduledJobFailed(RuntimeError):
    """A scheduled job answered an error: raised so the asynchronous invocation counts as failed."""


class ToolFunction:
    """The tool function of one process: its database, opened from the settings on the first call."""

    def __init__(self, settings: Callable[[], Settings]):
        self._settings = settings
        self._database: Database | None = None
        self._lock = threading.Lock()

    @property
    def database(self) -> Database:
        with self._lock:
            if self._database is None:
                self._database = Database.from_settings(self._settings())
            return self._database

    def __call__(self, event: Any) -> dict[str, Any]:
        answer = self._answer(event)
        if isinstance(event, dict) and event.get("scheduled") is True and "error" in answer:
            logger.error("scheduled %s failed: %s", event.get("tool"), answer["error"])
            raise ScheduledJobFailed(f"{event.get('tool')}: {answer['error']}")
        return answer

    def _answer(self, event: Any) -> dict[str, Any]:
        try:
            database = self.database
        except SettingError as exc:  # names the variable, never its value
            logger.error("the database is not configured: %s", exc)
            return Unavailable("the wine database is temporarily unavailable; try again shortly").as_payload()
        except Exception as exc:  # the secret or the URL can't be read: a clear answer, retryable
            logger.error("the database is not configured: %s", type(exc).__name__)
            return Unavailable("the wine database is temporarily unavailable; try again shortly").as_payload()
        return handle(event, database)
