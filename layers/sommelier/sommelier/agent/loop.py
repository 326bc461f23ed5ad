"""One conversation turn: guards, history, the tool-calling loop, validation and retries, and the
fallback chain (docs/architecture.md): tool failure → catalogue in the prompt; LLM failure → the
offline responder (built only when it answers).

A turn is a generator (`SommelierAgent.stream_turn`): while the model streams its answer it yields the
pieces a chat may show at once (`agent.streaming`: the intro as it grows, the intro, each checked wine), and
it returns the `TurnResult`. The caller delivers each piece before the turn goes on; `run` is the same turn
answered whole.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from sommelier.agent import prompts
from sommelier.agent.answer import parse_final_response
from sommelier.agent.context import moment_context
from sommelier.agent.guards import GuardVerdict, guard_response, is_leak_error, precheck
from sommelier.agent.llm.port import (
    ChatLLM,
    ContentPart,
    GenerationsSpent,
    LLMDeadlineExceeded,
    LLMError,
    LLMLedger,
    LLMMessage,
    LLMReply,
    LLMRequestRejected,
    ToolCall,
    ToolSpec,
    Usage,
    drain,
)
from sommelier.agent.llm.stream import StreamBroken
from sommelier.agent.prefetch import Prefetched, compact_result, prefetch
from sommelier.agent.streaming import AnswerPiece, Shown, StreamedAnswer, merge_shown
from sommelier.agent.tools import LLM_TOOLS, TOOL_SCHEMAS
from sommelier.domain.answer import (
    RESPONSE_JSON_SCHEMA,
    ParseResult,
    SommelierResponse,
    WineRecommendation,
    answer_as_text,
    truncate_for_storage,
)
from sommelier.domain.conversation import ChatMessage, Deadline, SavedTurn, TurnRecord, TurnStats
from sommelier.domain.errors import PortError
from sommelier.domain.pricing import DEFAULT_PRICE, LLMPrice
from sommelier.domain.search import SearchResult, ToolRequest
from sommelier.domain.wine import Wine
from sommelier.domain.wire import to_wire
from sommelier.embeddings import EmbeddingError, EmbeddingProvider, embed_one
from sommelier.observability.telemetry import record_turn
from sommelier.repositories.adapters import Repositories
from sommelier.settings import DEFAULT_TURN_BUDGET_S

logger = logging.getLogger(__name__)

HISTORY_MESSAGES = 10
CATALOG_FALLBACK_SIZE = 20
MAX_USER_TEXT = 2000

Found = dict[str, Wine]  # the wines the tools returned this turn, by id (each with found_by)
Turn = Generator[AnswerPiece, None, "TurnResult"]
Call = Generator[AnswerPiece, None, LLMReply]


class ToolUseFailure(RuntimeError):
    """Tool calling can't work this turn (the endpoint rejects tools, or every tool call failed)."""


class FallbackAnswer(Protocol):
    response: SommelierResponse
    found_wines: list[Wine]
    tool_calls: list[dict[str, Any]]
    error: str | None


class Fallback(Protocol):
    """The rule-based responder that answers when the LLM cannot (sommelier.offline.OfflineResponder)."""

    def respond(
        self, text: str, history: list[ChatMessage] | None = None, exclude_ids: list[str] | None = None
    ) -> FallbackAnswer: ...

    def candidate_searches(
        self, text: str, history: list[ChatMessage] | None = None, exclude_ids: list[str] | None = None
    ) -> list[ToolRequest]: ...


@dataclass
class TurnRequest:
    text: str
    chat_id: int
    user_id: int | None = None
    update_id: int | None = None
    profile: Mapping[str, object] | None = None
    exclude_ids: list[str] = field(default_factory=list)
    save: bool = True
    deadline: Deadline | None = None  # default: LLM_TURN_BUDGET_S from now
    shown: Shown | None = None  # what the customer already has from this update (a redelivery); streamed turns
    history: list[ChatMessage] | None = None  # loaded by the caller's begin_turn; None: the agent loads it
    invocations_at_start: int | None = None  # the counter before the caller's begin_turn
    image: str | None = None  # a photo the customer sent (a data URL), shown to a model that sees images


@dataclass
class TurnResult:
    response: SommelierResponse
    text: str
    found_wines: Found
    metadata: dict[str, Any]
    saved: SavedTurn | None = None
    wines: dict[str, Wine] | None = None  # the shown wines from end_turn; None: not loaded

    @property
    def assistant_message_id(self) -> int | None:
        return self.saved.assistant_message_id if self.saved is not None else None


@dataclass
class _Trace:
    """What one turn did, for metadata and metrics."""

    started: float = field(default_factory=time.perf_counter)
    mode: str = "llm"
    model: str | None = None
    deadline: Deadline = field(default_factory=lambda: Deadline.after(60.0))
    ledger: LLMLedger = field(default_factory=LLMLedger)
    tool_rounds: int = 0
    tools_used: list[str] = field(default_factory=list)
    tool_errors: list[str] = field(default_factory=list)
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    stages_ms: dict[str, float] = field(default_factory=dict)
    prefetched: int | None = None  # candidates put in the first call's prompt (None: no prefetch)

    def add_stage(self, name: str, since: float) -> None:
        self.stages_ms[name] = round(self.stages_ms.get(name, 0.0) + (time.perf_counter() - since) * 1000, 2)


@dataclass
class _Online:
    """One LLM turn under way: the conversation sent to the model, what the tools found, what was shown."""

    request: TurnRequest
    trace: _Trace
    messages: list[LLMMessage]
    found: Found = field(default_factory=dict)
    streamed: bool = False  # the answer is shown while it streams


class SommelierAgent:
    def __init__(
        self,
        *,
        repositories: Repositories,
        embedder: EmbeddingProvider,
        llm: ChatLLM | None,
        fallback: Callable[[], Fallback],
        max_tool_rounds: int = 2,
        max_retries: int = 2,
        history_messages: int = HISTORY_MESSAGES,
        turn_budget_s: float = DEFAULT_TURN_BUDGET_S,
        prefetch: bool = True,
        price: LLMPrice | None = DEFAULT_PRICE,
    ):
        self.repositories = repositories
        self.catalog = repositories.catalog
        self.chat = repositories.chat
        self.embedder = embedder
        self.llm = llm
        self._make_fallback = fallback
        self._fallback: Fallback | None = None
        self.max_tool_rounds = max_tool_rounds
        self.max_retries = max_retries
        self.history_messages = history_messages
        self.turn_budget_s = turn_budget_s  # a turn's budget when the caller gives no deadline
        self.prefetch = prefetch  # candidates in the first call's prompt (LLM_PREFETCH)
        self.price = price  # LLM_PRICE_PER_MTOK, for the cost of a turn the provider does not report

    @property
    def offline(self) -> Fallback:
        """The rule-based responder: about 100 ms of import, paid only by a turn that needs it."""
        if self._fallback is None:
            self._fallback = self._make_fallback()
        return self._fallback

    # ------------------------------------------------------------------ entry points
    def run(self, request: TurnRequest) -> TurnResult:
        """One turn, answered whole."""
        return drain(self.stream_turn(replace(request, shown=None)))

    def stream_turn(self, request: TurnRequest) -> Turn:
        """One turn that yields the pieces of its answer as the model writes them (when it streams)."""
        deadline = request.deadline or Deadline.after(self.turn_budget_s)
        trace = _Trace(model=self.llm.model if self.llm else None, deadline=deadline)
        counter = self.repositories.counter
        invocations_at_start = counter.count if request.invocations_at_start is None else request.invocations_at_start
        text = request.text.strip()[: MAX_USER_TEXT * 2]
        verdict = precheck(text)
        if request.history is not None:
            history = request.history
        else:
            history = self._history(request, trace) if verdict is None else []
        found: Found = {}
        save = request.save

        if verdict is not None:
            trace.mode = "guard"
            response = guard_response(verdict)
            save = False  # an attack must not be replayed to the model as history
        elif self.llm is None:
            trace.mode = "offline"
            response, found = self._offline(text, history, request, trace)
        else:
            try:
                response, found, save_ok = yield from self._online(text, history, request, trace)
                save = save and save_ok
            except LLMError as exc:
                logger.warning("LLM failed, using the offline responder: %s", exc)
                trace.errors.append(str(exc)[:300])
                trace.mode = "offline_fallback"
                response, found = self._offline(text, history, request, trace)

        if request.shown is not None and request.shown.anything and trace.mode != "guard":
            response = merge_shown(response, request.shown)  # never repeat what was already sent
        rendered = answer_as_text(response)
        record = (
            self._record(request, text, rendered, response, trace) if save and trace.mode != "unavailable" else None
        )
        saved, wines = self._end_turn(record, response, trace)
        metadata = self._metadata(response, found, history, trace, self.price)
        metadata["tool_function_calls"] = counter.count - invocations_at_start
        record_turn(metadata)
        return TurnResult(
            response=response, text=rendered, found_wines=found, metadata=metadata, saved=saved, wines=wines
        )

    # ------------------------------------------------------------------ the LLM path
    def _online(
        self, text: str, history: list[ChatMessage], request: TurnRequest, trace: _Trace
    ) -> Generator[AnswerPiece, None, tuple[SommelierResponse, Found, bool]]:
        moment = moment_context()
        prefetched = self._prefetch(text, history, request, trace) if self.prefetch else None
        user_prompt = prompts.build_user_prompt(
            text,
            moment=moment,
            history=history,
            profile=request.profile,
            candidates=prefetched.rows() if prefetched is not None and prefetched.searched else None,
            filters=prefetched.filters() if prefetched is not None else None,
        )
        content: str | list[ContentPart] = user_prompt
        if request.image:  # the client turns it into words for a model that cannot see
            content = [
                {"type": "text", "text": user_prompt},
                {"type": "image_url", "image_url": {"url": request.image}},
            ]
        turn = _Online(
            request,
            trace,
            [{"role": "system", "content": prompts.SYSTEM_PROMPT}, {"role": "user", "content": content}],
            found=dict(prefetched.wines) if prefetched is not None else {},
            streamed=request.shown is not None and bool(getattr(self.llm, "streams", False)),
        )
        try:
            reply = yield from self._tool_loop(turn)
        except StreamBroken as exc:
            reply = _broken_reply(exc, trace)
        except ToolUseFailure as exc:
            logger.warning("tool use failed, falling back to the catalogue in the prompt: %s", exc)
            trace.errors.append(str(exc)[:300])
            trace.mode = "catalog_fallback"
            turn.found = self._catalogue_for_prompt(text, history, request, trace)
            catalog = [_model_view(w) for w in turn.found.values()]
            prompt = prompts.build_user_prompt(
                text, moment=moment, history=history, profile=request.profile, catalog=catalog
            )
            turn.messages = [{"role": "system", "content": prompts.SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
            reply = yield from self._streamed_final(turn, tools=None)
        try:
            result = yield from self._validated(reply, turn)
        except LLMDeadlineExceeded as exc:
            if not turn.found:
                raise
            # The budget ran out while the answer was being corrected: answer from what the tools found.
            logger.warning("no time left to correct the answer: %s", exc)
            trace.errors.append(str(exc)[:300])
            trace.mode = "degraded"
            return degraded_response(turn.found), turn.found, False
        return self._settle(result, turn)

    def _settle(self, result: ParseResult, turn: _Online) -> tuple[SommelierResponse, Found, bool]:
        """The answer after the retries: the model's, the guard's, or one made from what the tools found."""
        if result.ok and result.response is not None:
            return result.response, turn.found, True
        shown = turn.request.shown
        if result.error == STREAM_BROKEN_ERROR and not (shown and shown.anything):
            # Every attempt broke before anything reached the customer: an LLM failure like any other.
            raise LLMError("the answer's stream broke on every attempt")
        if is_leak_error(result.error):
            # The model kept leaking its instructions or playing an injected role: answer as the guard does.
            turn.trace.mode = "guard_output"
            return guard_response(GuardVerdict("prompt_injection", "output leak")), {}, False
        turn.trace.mode = "degraded"
        return degraded_response(turn.found), turn.found, False

    def _prefetch(self, text: str, history: list[ChatMessage], request: TurnRequest, trace: _Trace) -> Prefetched:
        """The request's candidates before the first call; none when the search fails (the model searches)."""
        started = time.perf_counter()
        try:
            found = prefetch(self.offline, self.catalog, text, history, request.exclude_ids)
        except Exception as exc:  # the model's own tools still serve the turn
            logger.warning("prefetch failed; the model searches itself: %s", exc)
            trace.tool_errors.append(f"prefetch: {type(exc).__name__}")
            return Prefetched()
        finally:
            trace.add_stage("prefetch", started)
        trace.prefetched = len(found.wines)
        if found.searched:
            trace.tools_used.append("prefetch")
        return found

    def _catalogue_for_prompt(
        self, text: str, history: list[ChatMessage], request: TurnRequest, trace: _Trace
    ) -> Found:
        """Candidates for a model that cannot call tools: the offline reader's search for this query,
        else a slice of the catalogue."""
        started = time.perf_counter()
        try:
            answer = self.offline.respond(text, history, exclude_ids=request.exclude_ids)
            candidates = [] if answer.error else answer.found_wines[:CATALOG_FALLBACK_SIZE]
        except Exception as exc:  # the catalogue slice below still serves the model
            logger.warning("offline retrieval for the catalogue prompt failed: %s", exc)
            candidates = []
        finally:
            trace.add_stage("tools", started)
        if candidates:
            trace.tools_used.append("offline_retrieval")
            return {w.id: replace(w, found_by=w.found_by or "offline_retrieval") for w in candidates}
        try:
            catalog = self.catalog.fallback_list(limit=CATALOG_FALLBACK_SIZE, exclude_ids=request.exclude_ids)
        except PortError as exc:
            raise LLMError(f"the catalogue is unavailable too: {exc}") from exc
        trace.tools_used.append("get_list")
        return {w.id: replace(w, found_by="get_list") for w in catalog}

    def _tool_loop(self, turn: _Online) -> Call:
        """At most `max_tool_rounds` rounds with tools, then a final call without tools.

        The calls of one round go to the tool function together (one invocation in Lambda mode)."""
        attempted = failed = 0
        trace = turn.trace
        while True:
            if trace.tool_rounds >= self.max_tool_rounds:
                return (yield from self._call(turn, tools=TOOL_SCHEMAS, final=True))
            try:
                # Streamed too: the answer often comes in a round that still offers tools.
                reply = yield from self._call(turn, tools=TOOL_SCHEMAS)
            except LLMRequestRejected as exc:
                raise ToolUseFailure(str(exc)) from exc
            if not reply.tool_calls:
                return reply
            turn.messages.append(reply.assistant_message())
            for call, result in zip(reply.tool_calls, self._execute_round(reply.tool_calls, turn), strict=True):
                attempted += 1
                failed += bool(result.get("retryable"))
                content = json.dumps(result, ensure_ascii=False)
                turn.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            trace.tool_rounds += 1
            if attempted and failed == attempted and not turn.found:
                raise ToolUseFailure("every tool call failed: the wine database is unreachable")

    def _call(self, turn: _Online, *, tools: list[ToolSpec] | None, final: bool = False) -> Call:
        """One logical LLM call within the turn's deadline; the adapter counts its HTTP requests. When the turn
        shows its answer as it streams, the checked pieces of the answer are yielded as they complete."""
        llm, trace = self.llm, turn.trace
        if llm is None:
            raise LLMError("no LLM is configured")
        options: dict[str, Any] = {
            "tools": tools,
            "final": final,
            "response_format": {"type": "json_schema", "json_schema": RESPONSE_JSON_SCHEMA} if final else None,
            "deadline": trace.deadline,
            "ledger": trace.ledger,
        }
        started = time.perf_counter()
        try:
            if turn.streamed and turn.request.shown is not None:
                pieces = StreamedAnswer(turn.found, turn.request.shown)
                deltas = llm.stream(turn.messages, **options)
                while True:
                    try:
                        delta = next(deltas)
                    except StopIteration as done:
                        reply: LLMReply = done.value
                        break
                    yield from pieces.feed(delta)
            else:
                reply = llm.complete(turn.messages, **options)
        finally:
            trace.add_stage("llm", started)
        trace.model = reply.model or trace.model
        return reply

    def _streamed_final(self, turn: _Online, *, tools: list[ToolSpec] | None) -> Call:
        """The call that writes the customer's answer, whose broken stream becomes a failed attempt for the
        retry path. Tools only as the endpoint needs them (tool_choice "none"), the answer schema as
        response_format."""
        try:
            return (yield from self._call(turn, tools=tools, final=True))
        except StreamBroken as exc:
            return _broken_reply(exc, turn.trace)

    def _validated(self, reply: LLMReply, turn: _Online) -> Generator[AnswerPiece, None, ParseResult]:
        """Parse; on error feed it back and ask again, at most `max_retries` times, within the deadline.
        A stream that broke counts as a failed attempt; the retry names what the customer already saw."""
        trace, shown = turn.trace, turn.request.shown
        result = _parsed(reply, turn.found)
        tools = TOOL_SCHEMAS if trace.mode != "catalog_fallback" else None
        while not result.ok and trace.retries < self.max_retries:
            trace.errors.append(result.error or "")
            if reply.content and reply.content.strip():
                # An empty assistant message is a 400 on some providers: then only the user message goes.
                turn.messages.append({"role": "assistant", "content": reply.content})
            instruction = prompts.RETRY_INSTRUCTION.format(error=result.error)
            if shown is not None and shown.anything:
                instruction = f"{instruction}\n{shown.retry_note()}"
            append_user(turn.messages, instruction)
            trace.retries += 1
            try:
                reply = yield from self._streamed_final(turn, tools=tools)
            except GenerationsSpent as exc:  # retries end here: the answer is settled from what failed
                logger.warning("no more generations this turn: %s", exc)
                trace.errors.append(str(exc)[:300])
                break
            result = _parsed(reply, turn.found)
        if not result.ok:
            trace.errors.append(result.error or "")
        return result

    def _execute_round(self, calls: list[ToolCall], turn: _Online) -> list[dict[str, Any]]:
        """Run one round of tool calls. Every failure becomes a tool result the model can read."""
        results: list[dict[str, Any] | None] = []
        requests: list[ToolRequest] = []
        for call in calls:
            prepared = self._prepare(call, turn)
            if isinstance(prepared, ToolRequest):
                requests.append(prepared)
                results.append(None)
            else:
                results.append(prepared)
        if requests:
            started = time.perf_counter()
            answers = iter(self.catalog.run_llm_tools(requests))
            turn.trace.add_stage("tools", started)
            for index, call in enumerate(calls):
                if results[index] is None:
                    results[index] = self._read_answer(call.name, next(answers), turn)
        return [r for r in results if r is not None]

    def _prepare(self, call: ToolCall, turn: _Online) -> ToolRequest | dict[str, Any]:
        """The tool function's request for this call, or the error the model reads instead."""
        trace = turn.trace
        trace.tools_used.append(call.name)
        if call.name not in LLM_TOOLS:
            trace.tool_errors.append(f"unknown tool {call.name[:40]}")
            return {"error": f"неизвестный инструмент {call.name[:40]!r}; доступны search_wines и semantic_search"}
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            trace.tool_errors.append(f"{call.name}: invalid JSON arguments")
            return {"error": "аргументы должны быть корректным JSON-объектом"}
        if not isinstance(arguments, dict):
            return {"error": "аргументы должны быть JSON-объектом"}
        arguments = {k: v for k, v in arguments.items() if k not in ("embedding", "embedding_model", "limit")}
        if turn.request.exclude_ids:
            arguments["exclude_ids"] = turn.request.exclude_ids
        query = arguments.get("query")
        if call.name == "semantic_search" and isinstance(query, str) and query.strip():
            started = time.perf_counter()
            try:
                arguments["embedding"] = embed_one(self.embedder, query)
                arguments["embedding_model"] = self.embedder.model
            except EmbeddingError as exc:
                trace.tool_errors.append(f"embedding: {exc}")
                return {"error": "семантический поиск сейчас недоступен; используй search_wines", "retryable": True}
            finally:
                trace.add_stage("embedding", started)
        return ToolRequest(call.name, arguments)

    def _read_answer(self, name: str, answer: SearchResult | PortError, turn: _Online) -> dict[str, Any]:
        if isinstance(answer, PortError):
            payload = answer.as_payload()
            turn.trace.tool_errors.append(f"{name}: {str(payload['error'])[:200]}")
            return payload
        for wine in answer.wines_with_photos():
            turn.found.setdefault(wine.id, replace(wine, found_by=name))
        return compact_result(answer.for_model(), answer.wines)  # what the answer needs; no photo keys

    # ------------------------------------------------------------------ offline and plumbing
    def _offline(
        self, text: str, history: list[ChatMessage], request: TurnRequest, trace: _Trace
    ) -> tuple[SommelierResponse, Found]:
        started = time.perf_counter()
        try:
            answer = self.offline.respond(text, history, exclude_ids=request.exclude_ids)
        except Exception as exc:  # the last link of the chain: an apology, never a traceback
            logger.exception("offline responder failed")
            trace.errors.append(f"offline: {type(exc).__name__}")
            trace.mode = "unavailable"
            return apology_response(), {}
        finally:
            trace.add_stage("offline", started)
        trace.tools_used += [c["name"] for c in answer.tool_calls]
        found = {w.id: w for w in answer.found_wines}
        if answer.error:  # the responder apologised (its tools failed): not a successful turn, not saved
            trace.errors.append(f"offline: {answer.error}"[:300])
            trace.mode = "unavailable"
        return answer.response, found

    def _history(self, request: TurnRequest, trace: _Trace) -> list[ChatMessage]:
        started = time.perf_counter()
        try:
            return self.chat.history(request.chat_id, self.history_messages)
        except PortError as exc:
            trace.errors.append(f"history: {exc}")
            return []
        finally:
            trace.add_stage("history", started)

    @staticmethod
    def _record(
        request: TurnRequest, text: str, rendered: str, response: SommelierResponse, trace: _Trace
    ) -> TurnRecord:
        return TurnRecord(
            chat_id=request.chat_id,
            user_id=request.user_id,
            update_id=request.update_id,
            user_text=truncate_for_storage(text),
            answer_text=truncate_for_storage(rendered),
            wine_ids=response.wine_ids(),
            response_type=response.response_type,
            stats=TurnStats(
                mode=trace.mode,
                llm_calls=trace.ledger.logical_calls,
                prompt_tokens=trace.ledger.usage.prompt_tokens,
                completion_tokens=trace.ledger.usage.completion_tokens,
            ),
        )

    def _end_turn(
        self, record: TurnRecord | None, response: SommelierResponse, trace: _Trace
    ) -> tuple[SavedTurn | None, dict[str, Wine] | None]:
        """Save the turn and load the wines the answer shows, in one call."""
        started = time.perf_counter()
        try:
            end = self.chat.end_turn(record, wine_ids=response.wine_ids())
        except PortError as exc:
            logger.warning("could not end the turn: %s", exc)
            trace.errors.append(f"save: {exc}")
            return None, None
        finally:
            trace.add_stage("save", started)
        return end.saved, {w.id: w for w in end.wines}

    @staticmethod
    def _metadata(
        response: SommelierResponse,
        found: Found,
        history: list[ChatMessage],
        trace: _Trace,
        price: LLMPrice | None = None,
    ) -> dict[str, Any]:
        elapsed = round((time.perf_counter() - trace.started) * 1000, 2)
        return {
            "response_id": str(uuid.uuid4()),
            "generated_at": datetime.now(UTC).isoformat(),
            "model": trace.model if trace.mode not in ("offline", "guard") else "offline-rules",
            "mode": trace.mode,
            "offline": trace.mode in ("offline", "offline_fallback"),
            "generation_time_ms": elapsed,
            "candidates_retrieved": len(found),
            "conversation_turn": sum(1 for m in history if m.role == "user") + 1,
            "response_type": response.response_type,
            "guard_type": response.guard_type,
            "tools_used": trace.tools_used,
            "tool_errors": trace.tool_errors,
            "iterations": trace.tool_rounds,
            **trace.ledger.as_metadata(),
            "tokens": {
                "prompt": trace.ledger.usage.prompt_tokens,
                "cached": trace.ledger.usage.cached_tokens,
                "completion": trace.ledger.usage.completion_tokens,
                "reasoning": trace.ledger.usage.reasoning_tokens,
            },
            **turn_cost(trace.ledger.usage, price),
            "prefetched_candidates": trace.prefetched,
            "turn_budget_s": round(trace.deadline.budget_s, 2),
            "structured_output_retries": trace.retries,
            "structured_output_errors": trace.errors,
            "latency_ms": {**trace.stages_ms, "total": elapsed},
            "recommendations": [_grounding(rec, found) for rec in response.wines],
        }


def append_user(messages: list[LLMMessage], text: str) -> None:
    """A user message, kept alternating: after another user message the text joins it (Mistral-family and
    strict chat templates refuse two user messages in a row)."""
    last = messages[-1] if messages else None
    if last is None or last.get("role") != "user":
        messages.append({"role": "user", "content": text})
        return
    content = last.get("content")
    if isinstance(content, list):  # content parts (an image with its caption)
        joined: Any = [*content, {"type": "text", "text": text}]
    else:
        joined = f"{content or ''}\n\n{text}".strip()
    messages[-1] = {**last, "content": joined}


STREAM_BROKEN_ERROR = "ответ оборвался на середине; верни весь JSON-объект заново"


def turn_cost(usage: Usage, price: LLMPrice | None) -> dict[str, Any]:
    """The turn's LLM cost in dollars: what the provider reported, else the tokens at LLM_PRICE_PER_MTOK."""
    if usage.cost_usd is not None:
        return {"cost_usd": round(usage.cost_usd, 6), "cost_source": "provider"}
    if price is None or not (usage.prompt_tokens or usage.completion_tokens):
        return {"cost_usd": None if price is None else 0.0, "cost_source": None}
    cost = price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
    return {"cost_usd": round(cost, 6), "cost_source": "price"}


def _broken_reply(exc: StreamBroken, trace: _Trace) -> LLMReply:
    logger.warning("the answer's stream broke: %s", exc)
    trace.errors.append(str(exc)[:300])
    return LLMReply(content=exc.partial, finish_reason="error")


def _parsed(reply: LLMReply, found: Found) -> ParseResult:
    if reply.finish_reason == "error":  # a broken stream: whatever parsed from it is not the whole answer
        return ParseResult(error=STREAM_BROKEN_ERROR)
    return parse_final_response(reply.content, found)


def _model_view(wine: Wine) -> dict[str, Any]:
    """A wine as the model sees it in a catalogue prompt (no scores, photo keys or availability)."""
    view: dict[str, Any] = to_wire(wine)
    for key in ("similarity_score", "image_key", "telegram_file_id", "available"):
        view.pop(key, None)
    return view


def _grounding(rec: WineRecommendation, found: Found) -> dict[str, Any]:
    wine = found.get(rec.wine_id or "")
    source = wine.found_by if wine is not None else None
    score = wine.similarity_score if wine is not None else None
    if score is None and source == "search_wines":
        score = 1.0  # every structured filter matched
    return {"wine_id": rec.wine_id, "wine_name": rec.wine_name, "relevance_score": score, "source_tool": source}


def degraded_response(found: Found) -> SommelierResponse:
    """Retries ran out: answer from what the tools found, or say honestly that nothing fits."""
    ranked = sorted(found.values(), key=lambda w: -(w.similarity_score or 1.0))[:3]
    if not ranked:
        return SommelierResponse(
            response_type="informational",
            intro="К сожалению, сейчас не получилось подобрать вино по вашему запросу.",
            closing="Попробуете описать, что хочется, чуть иначе — например, тип вина, бюджет или блюдо?",
        )
    wines = [WineRecommendation(wine_id=w.id, wine_name=w.name, description=_short_description(w)) for w in ranked]
    return SommelierResponse(
        response_type="recommendation",
        intro="Вот что я нашёл в каталоге по вашему запросу.",
        wines=wines,
        closing="Рассказать подробнее о каком-нибудь из них или подобрать другие варианты?",
    )


def _short_description(wine: Wine) -> str:
    price = f"{int(wine.price_rub):,}".replace(",", " ")
    text = f"{wine.producer}, {wine.region}. {wine.description} Цена: {price} ₽."
    return text if len(text) <= 780 else text[:777].rsplit(" ", 1)[0] + "…"


def apology_response() -> SommelierResponse:
    return SommelierResponse(
        response_type="informational",
        intro="Простите, у меня сейчас технические трудности и я не могу заглянуть в каталог.",
        closing="Напишите мне, пожалуйста, через пару минут — я обязательно подберу вино.",
    )
