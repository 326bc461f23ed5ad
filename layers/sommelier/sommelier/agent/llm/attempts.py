"""The attempts of one logical call, within the turn's deadline: each attempt's timeout, what a failure
teaches or costs (a lesson, a pause and a retry, or the end), an error in the answer tried once more, and
what a slow or a thinking model teaches the later calls (a longer timeout, a larger output limit).

No retry is started that cannot finish within the deadline, and a turn is billed at most
MAX_GENERATIONS_PER_TURN generations (timed-out ones too).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator
from typing import Any

from sommelier.agent.llm.capabilities import MAX_OUTPUT_TOKENS, CapabilityRegistry, ModelCapabilities
from sommelier.agent.llm.failures import BACKOFF_MAX_S, Lesson, Retry, error_in_body
from sommelier.agent.llm.port import (
    LLMDeadlineExceeded,
    LLMError,
    LLMLedger,
    LLMReply,
    LLMRequestRejected,
    ToolSpec,
)
from sommelier.agent.llm.reply import reply_from
from sommelier.domain.conversation import Deadline

logger = logging.getLogger(__name__)

MIN_CALL_S = 0.2  # a request with less time than this left is not started
MAX_LESSONS_PER_CALL = 6
SLOW_CALL_SHARE = 0.8  # a call that took this share of its timeout teaches a longer one…
SLOW_CALL_MARGIN = 1.5  # …of this many times what it took
MAX_GENERATIONS_PER_TURN = 3  # billed generations (timed-out ones too) one turn may cause


def call_deadline(deadline: Deadline | float | None, timeout: float, max_retries: int) -> Deadline:
    """The call's deadline: the turn's, an absolute time.monotonic end, or (alone) room for every retry."""
    if isinstance(deadline, (int, float)):
        return Deadline(ends_at=float(deadline), budget_s=max(0.0, float(deadline) - time.monotonic()))
    return deadline or Deadline.after(timeout * (max_retries + 1) + BACKOFF_MAX_S)


class CallState:
    """What one logical call has learned and spent across its attempts."""

    def __init__(
        self,
        *,
        model: str,
        capabilities: CapabilityRegistry,
        timeout: float,
        max_tokens: int,
        max_retries: int,
        tools: list[ToolSpec] | None,
    ):
        self.model = model
        self.capabilities = capabilities
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.tool_names = {t["function"]["name"] for t in tools or [] if "function" in t}
        self.retries = 0
        self.provider_errors = 0
        self.lessons = 0
        self.lengthened = False
        self.learned_timeout = capabilities.get(model).call_timeout_s or 0.0
        self.timeout_cap = max(timeout, self.learned_timeout)
        self.first_token_s: float | None = None  # the attempt's wait for its first data (set per attempt)

    def attempt_timeout(self, deadline: Deadline) -> float:
        remaining = deadline.remaining_for_llm()
        timeout = min(self.timeout_cap, remaining)
        if remaining - timeout < timeout + MIN_CALL_S:
            timeout = remaining  # no room for a retry after a cut-short attempt: let this one finish
        if timeout < MIN_CALL_S:
            raise LLMDeadlineExceeded(f"the turn's budget is spent ({deadline.budget_s:.1f} s)")
        # One long wait for the first token (a reasoning model thinks silently), not several short ones.
        self.first_token_s = timeout
        return timeout

    # ------------------------------------------------------------------ after a failed request
    def recover(self, exc: Exception, deadline: Deadline, ledger: LLMLedger, started: float) -> None:
        """After a failed request: learn, wait or give up (raises LLMError when no retry fits the budget).
        `exc`: a Lesson, a Retry, or the SDK's timeout."""
        if isinstance(exc, Lesson):
            self._learn(exc, ledger)
        elif isinstance(exc, Retry):
            self._wait(exc, deadline, ledger)
        else:
            self._after_timeout(exc, deadline, ledger, started)

    def _learn(self, lesson: Lesson, ledger: LLMLedger) -> None:
        self.lessons += 1
        if self.lessons > MAX_LESSONS_PER_CALL:
            raise LLMRequestRejected(f"the LLM rejected the request: {lesson.reason}") from None
        if lesson.change:
            self.capabilities.learn(self.model, lesson.change, lesson.reason)
        ledger.lessons.append(", ".join(f"{k}={v}" for k, v in lesson.change.items()) or lesson.note)

    def _wait(self, retry: Retry, deadline: Deadline, ledger: LLMLedger) -> None:
        if self.retries >= self.max_retries or deadline.remaining_for_llm() < retry.delay + MIN_CALL_S:
            raise LLMError(f"the LLM is unavailable: {retry.reason}") from None
        self.retries += 1
        ledger.retries += 1
        logger.warning("LLM call failed (%s); retrying in %.2f s", retry.reason, retry.delay)
        time.sleep(retry.delay)

    def _after_timeout(self, exc: Exception, deadline: Deadline, ledger: LLMLedger, started: float) -> None:
        ledger.timeouts += 1
        ledger.generations += 1  # the provider bills a generation it was producing
        spent = time.monotonic() - started
        # Retry only when the retry gets more time than the attempt that timed out.
        if (
            self.retries >= self.max_retries
            or deadline.remaining_for_llm() <= spent + MIN_CALL_S
            or ledger.generations >= MAX_GENERATIONS_PER_TURN
        ):
            raise LLMError(f"the LLM timed out after {spent:.1f} s; no time for another try") from exc
        self.retries += 1
        ledger.retries += 1
        self.timeout_cap = float("inf")  # the next attempt may use what is left of the budget
        logger.warning("LLM call timed out after %.1f s; trying again with the rest of the budget", spent)

    # ------------------------------------------------------------------ the answer
    def whole_reply(self, completion: Any, deadline: Deadline, ledger: LLMLedger) -> LLMReply | None:
        """The completion's reply; None: an error inside an HTTP 200, to try once more."""
        error = error_in_body(completion)
        if error is None:
            return reply_from(completion, self.model, self.tool_names or None)
        # OpenRouter reports errors after generation started as HTTP 200: retried once.
        ledger.provider_errors += 1
        self.provider_errors += 1
        if self.provider_errors > 1 or deadline.remaining_for_llm() < MIN_CALL_S * 2:
            raise LLMError(f"the provider answered an error: {error}")
        logger.warning("the provider answered an error in a 200 (%s); trying once more", error)
        ledger.retries += 1
        return None

    def streamed_reply(
        self, reader: Generator[str, None, LLMReply], deadline: Deadline, ledger: LLMLedger
    ) -> Generator[str, None, LLMReply | None]:
        """The stream's deltas, then its reply; None: a provider error before any content, to try once more."""
        from sommelier.agent.llm.stream import StreamBroken

        delivered = False
        try:
            while True:
                try:
                    delta = next(reader)
                except StopIteration as done:
                    reply: LLMReply = done.value
                    return reply
                delivered = True
                yield delta
        except StreamBroken as exc:
            # A provider error before any content reached the customer: retried once, like an error in a
            # 200; once content was shown, the agent's retry path takes it from there.
            if delivered or self.provider_errors >= 1 or deadline.remaining_for_llm() < MIN_CALL_S * 2:
                raise
            ledger.provider_errors += 1
            self.provider_errors += 1
            ledger.retries += 1
            logger.warning("the stream failed before any content (%s); trying once more", exc)
            return None

    # ------------------------------------------------------------------ what later calls learn
    def learn_from_duration(self, took: float, ledger: LLMLedger) -> None:
        if took > SLOW_CALL_SHARE * max(self.timeout, self.learned_timeout):
            # This model writes slowly: later calls get a timeout that lets such an answer finish.
            self.learned_timeout = round(took * SLOW_CALL_MARGIN, 3)
            self.capabilities.learn(self.model, {"call_timeout_s": self.learned_timeout}, f"a call took {took:.1f} s")
            ledger.lessons.append(f"call_timeout_s={self.learned_timeout:g}")

    def needs_room_to_think(
        self, reply: LLMReply, caps: ModelCapabilities, deadline: Deadline, ledger: LLMLedger
    ) -> bool:
        """Thinking used up the output limit (an empty answer cut by "length"): a larger limit, for this call
        and the model's later ones. True when the call is tried once more with it."""
        limit_now = caps.output_tokens or self.max_tokens
        if reply.content or reply.tool_calls or reply.finish_reason != "length" or self.lengthened:
            return False
        if limit_now >= MAX_OUTPUT_TOKENS:
            return False
        self.lengthened = True
        limit = min(MAX_OUTPUT_TOKENS, max(4 * limit_now, 8000))
        self.capabilities.learn(self.model, {"output_tokens": limit}, "empty answer cut by the limit")
        ledger.lessons.append(f"output_tokens={limit}")
        if deadline.remaining_for_llm() >= MIN_CALL_S * 2:
            ledger.retries += 1
            return True
        return False
