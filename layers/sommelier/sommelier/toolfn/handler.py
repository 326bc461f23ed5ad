"""The tool function's contract: {"tool": name, "arguments": {...}} → a JSON object. Never raises.

Failures answer {"error": ...} (plus "retryable" or "not_found"), the wire form of the port errors.
`run_tools` runs several LLM tool calls in one invocation: {"calls": [{"tool", "arguments"}, ...]}.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from sommelier.db.pool import Database
from sommelier.domain.errors import NotFound, PortError
from sommelier.domain.search import ArgumentError, require_object
from sommelier.toolfn.operations import LLM_OPERATIONS, OPERATIONS, run_operation

logger = logging.getLogger(__name__)

MAX_EVENT_BYTES = 5_000_000  # Lambda's synchronous payload limit is 6 MB
MAX_BATCH = 8
BATCH = "run_tools"
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


def handle(event: Any, database: Database | None = None) -> dict[str, Any]:
    """Run one tool call (or a batch of LLM tool calls). Bad input and failures answer {"error": ...}."""
    try:
        name, arguments = _decode(event)
    except PortError as exc:
        return exc.as_payload()
    if name == BATCH:
        return _batch(arguments, database)
    return _run(name, arguments, database)


def _run(name: str, arguments: Any, database: Database | None) -> dict[str, Any]:
    try:
        return run_operation(database, name, arguments)
    except PortError as exc:
        return exc.as_payload()
    except Exception:  # the contract: the caller always gets JSON
        logger.exception("tool %s failed", name)
        return {"error": f"{name} failed because of an internal error", "internal": True}


def _batch(arguments: Any, database: Database | None) -> dict[str, Any]:
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
