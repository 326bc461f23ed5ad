"""One LLM call of a turn, within the turn's deadline: whole, or streamed with the answer's checked pieces
yielded as they complete (agent.streaming). The adapter counts its HTTP requests in the turn's ledger.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from sommelier.agent.answer_checks import checking
from sommelier.agent.llm.port import LLMReply, ToolSpec
from sommelier.agent.llm.stream import StreamBroken
from sommelier.agent.streaming import StreamedAnswer
from sommelier.agent.turn import Call, OnlineTurn, TurnTrace
from sommelier.domain.answer import RESPONSE_JSON_SCHEMA

if TYPE_CHECKING:
    from sommelier.domain.wire import JSONObject

logger = logging.getLogger(__name__)


def call(turn: OnlineTurn, *, tools: list[ToolSpec] | None, final: bool = False) -> Call:
    """One logical LLM call. When the turn shows its answer as it streams, the checked pieces of the answer
    are yielded as they complete."""
    llm, trace, shown = turn.llm, turn.trace, turn.request.shown
    # Every call that may write the answer carries its schema (a tool round too: the one-call turn answers
    # there); the adapter sends it in the form the endpoint accepts (agent.llm.request).
    response_format: JSONObject | None = {"type": "json_schema", "json_schema": RESPONSE_JSON_SCHEMA}
    started = time.perf_counter()
    try:
        if turn.streamed and shown is not None:
            pieces = StreamedAnswer(
                turn.found, shown, checking(turn), admit=turn.fit.admits(), hold_intro=turn.fit.wants_wines
            )
            deltas = llm.stream(
                turn.messages,
                tools=tools,
                final=final,
                response_format=response_format,
                deadline=trace.deadline,
                ledger=trace.ledger,
            )
            while True:
                try:
                    delta = next(deltas)
                except StopIteration as done:
                    reply: LLMReply = done.value
                    break
                yield from pieces.feed(delta)
        else:
            reply = llm.complete(
                turn.messages,
                tools=tools,
                final=final,
                response_format=response_format,
                deadline=trace.deadline,
                ledger=trace.ledger,
            )
    finally:
        trace.add_stage("llm", started)
    trace.model = reply.model or trace.model
    return reply


def final_call(turn: OnlineTurn, *, tools: list[ToolSpec] | None) -> Call:
    """The call that writes the customer's answer, whose broken stream becomes a failed attempt for the
    retry path. Tools only as the endpoint needs them (tool_choice "none"), the answer schema as
    response_format."""
    try:
        return (yield from call(turn, tools=tools, final=True))
    except StreamBroken as exc:
        return broken_reply(exc, turn.trace)


def broken_reply(exc: StreamBroken, trace: TurnTrace) -> LLMReply:
    """A stream that broke, as a reply that failed: what had arrived, finished by "error"."""
    logger.warning("the answer's stream broke: %s", exc)
    trace.errors.append(str(exc)[:300])
    return LLMReply(content=exc.partial, finish_reason="error")
