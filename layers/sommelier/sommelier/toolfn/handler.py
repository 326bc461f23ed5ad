"""The tool function: every operation by name (the names and answers: domain/wire.py), how one runs against
PostgreSQL, and the contract: {"tool": name, "arguments": {...}} → a JSON object. Never raises, except for
a scheduled job ({"scheduled": true}, the nightly purge), whose failure must reach Lambda's retries and its
failure destination (template.yaml: JobFailureQueue and its alarm) instead of a JSON answer nobody reads.

`run_operation` is shared by the Lambda contract (`handle`, which answers JSON) and the in-process adapter
(which raises): database failures become port errors in one place. Failures answer {"error": ...} (plus
"retryable" or "not_found"), the wire form of the port errors. `run_tools` runs several LLM tool calls in
one invocation: {"calls": [{"tool", "arguments"}, ...]}.
"""

from __future__ import annotations

import importlib
import json
import logging
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

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
from sommelier.domain.wire import RUN_TOOLS, require_object, to_wire
from sommelier.settings import SettingError, Settings

logger = logging.getLogger(__name__)

Implementation = Callable[[psycopg.Connection, Any], Any]  # (connection, JSON arguments) -> a domain object

# Every operation's implementation as "module:function" of this package, imported when the operation first
# runs: a cold start loads only the SQL (and the domain types) its first call needs.
LLM_OPERATIONS: dict[str, str] = {
    wire.SEARCH_WINES.name: "search:search_wines_tool",
    wire.SEMANTIC_SEARCH.name: "search:semantic_search_tool",
}
OPERATIONS: dict[str, str] = {
    **LLM_OPERATIONS,
    wire.BEGIN_TURN.name: "chat_sql:begin_turn",
    wire.END_TURN.name: "chat_sql:end_turn",
    wire.GET_WINES.name: "catalog_sql:get_wines",
    wire.GET_LIST.name: "catalog_sql:get_list",
    wire.LOAD_HISTORY.name: "chat_sql:load_history",
    wire.SAVE_TURN.name: "chat_sql:save_turn",
    wire.RESET_HISTORY.name: "chat_sql:reset_history",
    wire.MOVE_CHAT.name: "chat_sql:move_chat",
    wire.UPSERT_USER.name: "chat_sql:upsert_user",
    wire.SET_USER_ACTIVE.name: "chat_sql:set_user_active",
    wire.CHAT_STATE.name: "chat_sql:chat_state",
    wire.CACHE_PHOTO.name: "chat_sql:cache_photo",
    wire.SAVE_FEEDBACK.name: "chat_sql:save_feedback",
    wire.CATALOG_STATS.name: "catalog_sql:catalog_stats",
    wire.EXPORT_WINES.name: "catalog_sql:export_wines",
    wire.LIST_WINES.name: "catalog_sql:list_wines",
    wire.IMPORT_WINES.name: "catalog_sql:import_wines",
    wire.UPDATE_EMBEDDINGS.name: "catalog_sql:update_embeddings",
    wire.EMBEDDING_TEXTS.name: "catalog_sql:embedding_texts",
    wire.GET_AGE_ANSWER.name: "shop_sql:get_age_answer",
    wire.SAVE_AGE_ANSWER.name: "shop_sql:save_age_answer",
    wire.FORGET_USER.name: "shop_sql:forget_user",
    wire.PURGE_OLD_MESSAGES.name: "shop_sql:purge_old_messages",
    wire.FIND_WINES.name: "shop_sql:find_wines",
    wire.WINE_CARD.name: "shop_sql:wine_card",
    wire.REPORT_DATA.name: "shop_sql:report_data",
    wire.ADMIN_STATS.name: "shop_sql:admin_stats",
}


@cache
def implementation(name: str) -> Implementation:
    module, _, function = OPERATIONS[name].partition(":")
    found: Implementation = getattr(importlib.import_module(f"sommelier.toolfn.{module}"), function)
    return found


def run_operation(database: Database, name: str, arguments: Any) -> Any:
    """Run one named operation on a pooled connection; database failures raise port errors."""
    try:
        with database.connection() as conn:
            return implementation(name)(conn, arguments)
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
KNOWN = sorted([*OPERATIONS, BATCH])


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
        answer: dict[str, Any] = to_wire(run_operation(database, name, arguments))
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
        if name not in LLM_OPERATIONS:
            results.append(NotFound(f"run_tools runs only {', '.join(LLM_OPERATIONS)}").as_payload())
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
