"""One conversation turn: guards, history, the LLM path and the fallback chain (docs/architecture.md): tool
failure → catalogue in the prompt; LLM failure → the offline responder (built only when it answers).

A turn is a generator (`SommelierAgent.stream_turn`): while the model streams its answer it yields the
pieces a chat may show at once (`agent.streaming`: the intro as it grows, the intro, each checked wine), and
it returns the `TurnResult`. The caller delivers each piece before the turn goes on; `run` is the same turn
answered whole.

The parts of a turn live beside it: what it carries (`agent.turn`), the prompt's candidates
(`agent.candidates`), the tool rounds (`agent.tool_rounds`), one LLM call (`agent.calls`), the answer's
checks and retries (`agent.retries`), the agent's own answers (`agent.fallback_answers`) and the turn's
metadata (`agent.metadata`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator
from dataclasses import replace
from typing import Any

from sommelier.agent import prompts
from sommelier.agent.answer_checks import ShopVoice
from sommelier.agent.calls import broken_reply, final_call
from sommelier.agent.candidates import (
    catalogue_for_prompt,
    opening_searches,
    prefetched,
    request_fit,
    table_for_prompt,
)
from sommelier.agent.care import alcohol_free_in_catalogue, care_answer, care_kind
from sommelier.agent.catalogue_rows import model_row
from sommelier.agent.context import MomentContext, moment_context
from sommelier.agent.fallback_answers import apology_response, degraded_response
from sommelier.agent.fitting import fitted
from sommelier.agent.guards import guard_response, precheck
from sommelier.agent.llm.port import ChatLLM, ContentPart, LLMDeadlineExceeded, LLMError, LLMMessage, drain
from sommelier.agent.llm.stream import StreamBroken
from sommelier.agent.metadata import turn_metadata
from sommelier.agent.prefetch import Prefetched
from sommelier.agent.refs import ref_of
from sommelier.agent.retries import settled, validated
from sommelier.agent.shop_desk import shop_answer, shop_prompt
from sommelier.agent.streaming import AnswerPiece, merge_shown
from sommelier.agent.tool_rounds import ToolUseFailure, tool_loop
from sommelier.agent.turn import Call, Fallback, Found, OnlineTurn, Turn, TurnRequest, TurnResult, TurnTrace
from sommelier.domain.answer import SommelierResponse, answer_as_text, truncate_for_storage
from sommelier.domain.conversation import ChatMessage, Deadline, SavedTurn, TurnRecord, TurnStats
from sommelier.domain.errors import PortError
from sommelier.domain.pricing import DEFAULT_PRICE, LLMPrice
from sommelier.domain.search import ToolRequest
from sommelier.domain.taste import describe, prefer
from sommelier.domain.variety import spread
from sommelier.domain.wine import Wine
from sommelier.embeddings import EmbeddingProvider
from sommelier.observability.telemetry import record_turn
from sommelier.repositories.adapters import Repositories
from sommelier.settings import DEFAULT_TURN_BUDGET_S

# The turn's entry point and what its callers hand it and get back (defined in agent.turn).
__all__ = ["Fallback", "SommelierAgent", "TurnRequest", "TurnResult"]

logger = logging.getLogger(__name__)

HISTORY_MESSAGES = 10
MAX_USER_TEXT = 2000

Answered = tuple[SommelierResponse, Found, bool]  # the answer, the wines behind it, whether it is saved


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
        shop: ShopVoice | None = None,
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
        self.shop = shop or ShopVoice()  # SHOP_NAME, SHOP_CONTACTS: what the answer's checks let the shop say

    @property
    def offline(self) -> Fallback:
        """The rule-based responder: about 100 ms of import, paid only by a turn that needs it."""
        if self._fallback is None:
            self._fallback = self._make_fallback()
        return self._fallback

    def _offline_responder(self) -> Fallback:
        return self.offline

    # ------------------------------------------------------------------ entry points
    def opening_searches(self, text: str, exclude_ids: list[str]) -> list[ToolRequest]:
        """The prefetch's searches for a message, for the caller to run with the turn's beginning (open_turn:
        one invocation for both). None for an offline turn, a guard's, without the prefetch, or when the
        reader sees no wine request."""
        text = text.strip()[: MAX_USER_TEXT * 2]
        if self.llm is None or not self.prefetch or precheck(text) is not None:
            return []
        return opening_searches(self._offline_responder, self.embedder, text, exclude_ids)

    def run(self, request: TurnRequest) -> TurnResult:
        """One turn, answered whole."""
        return drain(self.stream_turn(replace(request, shown=None)))

    def stream_turn(self, request: TurnRequest) -> Turn:
        """One turn that yields the pieces of its answer as the model writes them (when it streams)."""
        deadline = request.deadline or Deadline.after(self.turn_budget_s)
        trace = TurnTrace(model=self.llm.model if self.llm else None, deadline=deadline)
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

        desk = self._desk(text, request) if verdict is None else None
        if verdict is not None:
            trace.mode = "guard"
            response = guard_response(verdict)
            save = False  # an attack must not be replayed to the model as history
        elif desk is not None:
            trace.mode, response = desk  # the shop's facts or a care turn: the same words in both modes
        elif self.llm is None or not request.use_llm:
            trace.mode = "offline"
            response, found = self._offline(text, history, request, trace)
        else:
            try:
                response, found, save_ok = yield from self._online(self.llm, text, history, request, trace)
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
        metadata = turn_metadata(response, found, history, trace, self.price)
        metadata["tool_function_calls"] = counter.count - invocations_at_start
        record_turn(metadata)
        return TurnResult(
            response=response, text=rendered, found_wines=found, metadata=metadata, saved=saved, wines=wines
        )

    def _desk(self, text: str, request: TurnRequest) -> tuple[str, SommelierResponse] | None:
        """A care turn (age, health, allergy, alcohol-free) or a question about the shop, answered from the
        owner's facts before any wine is looked for (agent.care, agent.shop_desk); None: a wine turn."""
        kind = care_kind(text)
        if kind == "alcohol_free" and alcohol_free_in_catalogue(self.catalog):
            kind = None  # the catalogue has some: the ordinary turn shows them
        if kind is not None:
            return "care", care_answer(kind)
        answer = shop_answer(text, request.shop)
        return ("shop", answer) if answer is not None else None

    # ------------------------------------------------------------------ the LLM path
    def _online(
        self, llm: ChatLLM, text: str, history: list[ChatMessage], request: TurnRequest, trace: TurnTrace
    ) -> Generator[AnswerPiece, None, Answered]:
        """Tool rounds (or, when tools cannot work, the catalogue in the prompt), then the checked answer."""
        moment = moment_context()
        candidates = (
            prefetched(
                self._offline_responder, self.catalog, text, history, request.exclude_ids, trace, request.opening
            )
            if self.prefetch
            else None
        )
        if candidates is not None:  # the remembered taste ranks them; no near-copies among the first three
            candidates.wines = {w.id: w for w in spread(prefer(request.taste, candidates.wines.values()))}
        table = table_for_prompt(self._offline_responder, self.catalog, text, history, trace)
        found = {**(candidates.wines if candidates is not None else {}), **{w.id: w for w in table}}
        positions = {wine_id: i for i, wine_id in enumerate(found)}  # a ref is a position in the found wines
        table_rows = [model_row(w, ref_of(positions[w.id])) for w in table]
        turn = OnlineTurn(
            llm,
            request,
            trace,
            _opening(text, moment, history, request, candidates, table_rows),
            found=found,
            streamed=request.shown is not None and bool(getattr(llm, "streams", False)),
            fit=candidates.fit
            if candidates is not None
            else request_fit(self._offline_responder, text, history, request.exclude_ids),
            shop=self.shop,
        )
        try:
            reply = yield from tool_loop(turn, self.catalog, self.embedder, self.max_tool_rounds)
        except StreamBroken as exc:
            reply = broken_reply(exc, trace)
        except ToolUseFailure as exc:
            reply = yield from self._without_tools(turn, exc, text, moment, history)
        try:
            result = yield from validated(reply, turn, self.max_retries)
        except LLMDeadlineExceeded as exc:
            if not turn.found:
                raise
            # The budget ran out while the answer was being corrected: answer from what the tools found.
            logger.warning("no time left to correct the answer: %s", exc)
            trace.errors.append(str(exc)[:300])
            trace.mode = "degraded"
            return fitted((degraded_response(turn.found), turn.found, False), turn, self.catalog)
        return fitted(settled(result, turn), turn, self.catalog)

    def _without_tools(
        self, turn: OnlineTurn, failure: ToolUseFailure, text: str, moment: MomentContext, history: list[ChatMessage]
    ) -> Call:
        """Tool use failed: the conversation starts again with candidates in the prompt, and no tools."""
        request, trace = turn.request, turn.trace
        logger.warning("tool use failed, falling back to the catalogue in the prompt: %s", failure)
        trace.errors.append(str(failure)[:300])
        trace.mode = "catalog_fallback"
        turn.found = catalogue_for_prompt(
            self._offline_responder, self.catalog, text, history, request.exclude_ids, trace
        )
        catalog = [model_row(w, ref_of(i)) for i, w in enumerate(turn.found.values())]
        prompt = prompts.build_user_prompt(
            text,
            moment=moment,
            history=history,
            profile=request.profile,
            catalog=catalog,
            taste=describe(request.taste) if request.taste else None,
        )
        turn.messages = [{"role": "system", "content": prompts.SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
        return (yield from final_call(turn, tools=None))

    # ------------------------------------------------------------------ offline and plumbing
    def _offline(
        self, text: str, history: list[ChatMessage], request: TurnRequest, trace: TurnTrace
    ) -> tuple[SommelierResponse, Found]:
        started = time.perf_counter()
        try:
            answer = self.offline.respond(text, history, exclude_ids=request.exclude_ids, taste=request.taste)
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

    def _history(self, request: TurnRequest, trace: TurnTrace) -> list[ChatMessage]:
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
        request: TurnRequest, text: str, rendered: str, response: SommelierResponse, trace: TurnTrace
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
            taste=request.taste_note,
        )

    def _end_turn(
        self, record: TurnRecord | None, response: SommelierResponse, trace: TurnTrace
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


def _opening(
    text: str,
    moment: MomentContext,
    history: list[ChatMessage],
    request: TurnRequest,
    found: Prefetched | None,
    table: list[dict[str, Any]] | None = None,
) -> list[LLMMessage]:
    """The first call's conversation: the system prompt, and the user's message with its context, the
    prefetched candidates and the photo the customer sent."""
    user_prompt = prompts.build_user_prompt(
        text,
        moment=moment,
        history=history,
        profile=request.profile,
        candidates=found.rows() if found is not None and found.searched else None,
        filters=found.filters() if found is not None else None,
        table=table or None,
        taste=describe(request.taste) if request.taste else None,
    )
    user_prompt += shop_prompt(request.shop)  # the shop's facts, fenced as data (agent.shop_desk)
    content: str | list[ContentPart] = user_prompt
    if request.image:  # the client turns it into words for a model that cannot see
        content = [
            {"type": "text", "text": user_prompt},
            {"type": "image_url", "image_url": {"url": request.image}},
        ]
    return [{"role": "system", "content": prompts.SYSTEM_PROMPT}, {"role": "user", "content": content}]
