"""The tool rounds of an LLM turn: the model's calls of one round run together (one tool-function invocation
in Lambda mode), and every result, a failure too, goes back to the model as a message it can read.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from typing import Any

from sommelier.agent.calls import call
from sommelier.agent.catalogue_rows import tool_content
from sommelier.agent.llm.port import LLMRequestRejected, ToolCall
from sommelier.agent.prefetch import ToolRunner, compact_result
from sommelier.agent.refs import refs_by_id
from sommelier.agent.tools import LLM_TOOLS, TOOL_SCHEMAS
from sommelier.agent.turn import Call, OnlineTurn
from sommelier.domain.errors import PortError
from sommelier.domain.search import SearchResult, ToolRequest
from sommelier.embeddings import EmbeddingError, EmbeddingProvider, embed_one

logger = logging.getLogger(__name__)

# Arguments the model may not set: the caller's embedding and the tool's own limit.
CALLER_ARGUMENTS = ("embedding", "embedding_model", "limit")


class ToolUseFailure(RuntimeError):
    """Tool calling can't work this turn (the endpoint rejects tools, or every tool call failed)."""


def tool_loop(turn: OnlineTurn, tools: ToolRunner, embedder: EmbeddingProvider, max_rounds: int) -> Call:
    """At most `max_rounds` rounds with tools, then a final call without tools.

    The calls of one round go to the tool function together (one invocation in Lambda mode)."""
    attempted = failed = 0
    trace = turn.trace
    while True:
        if trace.tool_rounds >= max_rounds:
            return (yield from call(turn, tools=TOOL_SCHEMAS, final=True))
        try:
            # Streamed too: the answer often comes in a round that still offers tools.
            reply = yield from call(turn, tools=TOOL_SCHEMAS)
        except LLMRequestRejected as exc:
            raise ToolUseFailure(str(exc)) from exc
        if not reply.tool_calls:
            return reply
        turn.messages.append(reply.assistant_message())
        results = execute_round(reply.tool_calls, turn, tools, embedder)
        for tool_call, result in zip(reply.tool_calls, results, strict=True):
            attempted += 1
            failed += bool(result.get("retryable"))
            content = tool_content(result)  # catalogue data, fenced and labelled (agent.catalogue_rows)
            turn.messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": content})
        trace.tool_rounds += 1
        if attempted and failed == attempted and not turn.found:
            raise ToolUseFailure("every tool call failed: the wine database is unreachable")


def execute_round(
    calls: list[ToolCall], turn: OnlineTurn, tools: ToolRunner, embedder: EmbeddingProvider
) -> list[dict[str, Any]]:
    """Run one round of tool calls. Every failure becomes a tool result the model can read."""
    results: list[dict[str, Any] | None] = []
    requests: list[ToolRequest] = []
    for tool_call in calls:
        prepared = prepare(tool_call, turn, embedder)
        if isinstance(prepared, ToolRequest):
            requests.append(prepared)
            results.append(None)
        else:
            results.append(prepared)
    if requests:
        started = time.perf_counter()
        answers = iter(tools.run_llm_tools(requests))
        turn.trace.add_stage("tools", started)
        for index, tool_call in enumerate(calls):
            if results[index] is None:
                results[index] = read_answer(tool_call.name, next(answers), turn)
    return [r for r in results if r is not None]


def prepare(tool_call: ToolCall, turn: OnlineTurn, embedder: EmbeddingProvider) -> ToolRequest | dict[str, Any]:
    """The tool function's request for this call, or the error the model reads instead."""
    trace, name = turn.trace, tool_call.name
    trace.tools_used.append(name)
    if name not in LLM_TOOLS:
        trace.tool_errors.append(f"unknown tool {name[:40]}")
        return {"error": f"неизвестный инструмент {name[:40]!r}; доступны search_wines и semantic_search"}
    try:
        arguments = json.loads(tool_call.arguments) if tool_call.arguments.strip() else {}
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        trace.tool_errors.append(f"{name}: invalid JSON arguments")
        return {"error": "аргументы должны быть корректным JSON-объектом"}
    if not isinstance(arguments, dict):
        return {"error": "аргументы должны быть JSON-объектом"}
    arguments = {k: v for k, v in arguments.items() if k not in CALLER_ARGUMENTS}
    arguments, changes = turn.fit.constraints.bind(arguments)  # never looser than the customer's request
    if changes:
        logger.warning("the model's %s call was held to the request: %s", name, "; ".join(changes))
        trace.corrections += [f"{name}: {change}" for change in changes]
    if turn.request.exclude_ids:
        arguments["exclude_ids"] = turn.request.exclude_ids
    query = arguments.get("query")
    if name == "semantic_search" and isinstance(query, str) and query.strip():
        started = time.perf_counter()
        try:
            arguments["embedding"] = embed_one(embedder, query)
            arguments["embedding_model"] = embedder.model
        except EmbeddingError as exc:
            trace.tool_errors.append(f"embedding: {exc}")
            return {"error": "семантический поиск сейчас недоступен; используй search_wines", "retryable": True}
        finally:
            trace.add_stage("embedding", started)
    return ToolRequest(name, arguments)


def read_answer(name: str, answer: SearchResult | PortError, turn: OnlineTurn) -> dict[str, Any]:
    """A tool's answer as the model reads it; the wines it found join the turn's (each with found_by)."""
    if isinstance(answer, PortError):
        payload = answer.as_payload()
        turn.trace.tool_errors.append(f"{name}: {str(payload['error'])[:200]}")
        return payload
    for wine in answer.wines_with_photos():
        turn.found.setdefault(wine.id, replace(wine, found_by=name))
    refs = refs_by_id(turn.found)  # each wine by its short reference in this turn (agent.refs)
    return compact_result(answer.for_model(), answer.wines, refs)  # what the answer needs; no photo keys
