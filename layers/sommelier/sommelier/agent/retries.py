"""The model's answer checked, and asked for again: each error is fed back at most `max_retries` times
within the deadline (a broken stream counts as a failed attempt), and when the retries run out the turn
answers with the guard's words or from what the tools found.
"""

from __future__ import annotations

import logging
from collections.abc import Generator

from sommelier.agent import prompts
from sommelier.agent.answer import parse_final_response
from sommelier.agent.answer_checks import checking
from sommelier.agent.calls import final_call
from sommelier.agent.fallback_answers import degraded_response
from sommelier.agent.guards import GuardVerdict, guard_response
from sommelier.agent.llm.port import ContentPart, GenerationsSpent, LLMError, LLMMessage, LLMReply
from sommelier.agent.output_guard import is_leak_error
from sommelier.agent.streaming import AnswerPiece
from sommelier.agent.tools import TOOL_SCHEMAS
from sommelier.agent.turn import Found, OnlineTurn
from sommelier.domain.answer import ParseResult, SommelierResponse

logger = logging.getLogger(__name__)

STREAM_BROKEN_ERROR = "ответ оборвался на середине; верни весь JSON-объект заново"


def validated(reply: LLMReply, turn: OnlineTurn, max_retries: int) -> Generator[AnswerPiece, None, ParseResult]:
    """Parse; on error feed it back and ask again, at most `max_retries` times, within the deadline.
    A stream that broke counts as a failed attempt; the retry names what the customer already saw."""
    trace, shown = turn.trace, turn.request.shown
    result = parsed(reply, turn)
    tools = TOOL_SCHEMAS if trace.mode != "catalog_fallback" else None
    while not result.ok and trace.retries < max_retries:
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
            reply = yield from final_call(turn, tools=tools)
        except GenerationsSpent as exc:  # retries end here: the answer is settled from what failed
            logger.warning("no more generations this turn: %s", exc)
            trace.errors.append(str(exc)[:300])
            break
        result = parsed(reply, turn)
    if not result.ok:
        trace.errors.append(result.error or "")
    return result


def settled(result: ParseResult, turn: OnlineTurn) -> tuple[SommelierResponse, Found, bool]:
    """The answer after the retries: the model's, the guard's, or one made from what the tools found; and
    whether the turn is saved as history."""
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


def parsed(reply: LLMReply, turn: OnlineTurn) -> ParseResult:
    if reply.finish_reason == "error":  # a broken stream: whatever parsed from it is not the whole answer
        return ParseResult(error=STREAM_BROKEN_ERROR)
    result = parse_final_response(reply.content, turn.found, checking(turn))
    turn.trace.errors += [f"check: {name}" for name in result.checks_failed]  # which sentence check removed text
    return result


def append_user(messages: list[LLMMessage], text: str) -> None:
    """A user message, kept alternating: after another user message the text joins it (Mistral-family and
    strict chat templates refuse two user messages in a row)."""
    last = messages[-1] if messages else None
    if last is None or last.get("role") != "user":
        messages.append({"role": "user", "content": text})
        return
    content = last.get("content")
    joined: str | list[ContentPart]
    if isinstance(content, list):  # content parts (an image with its caption)
        joined = [*content, {"type": "text", "text": text}]
    else:
        joined = f"{content or ''}\n\n{text}".strip()
    messages[-1] = {**last, "content": joined}
