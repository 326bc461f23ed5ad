"""The turn deadline: one budget per conversation turn, from which every LLM call takes its time.

In the agent function the budget is the invocation's remaining time minus what delivery to Telegram
needs; locally it is ``LLM_TURN_BUDGET_S``. The LLM may use the budget up to a reserve kept for the
fallback (the offline answer), so the customer always gets an answer before the budget ends.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from sommelier.settings import env

DEFAULT_TURN_BUDGET_S = 60.0
DEFAULT_DELIVERY_RESERVE_S = 8.0
# Time kept for the offline answer after the LLM gives up (tool calls and rendering, no network model).
FALLBACK_RESERVE_FRACTION = 0.05
MAX_FALLBACK_RESERVE_S = 2.0


def env_seconds(name: str, default: float) -> float:
    raw = env(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from exc
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {raw!r}")
    return value


@dataclass(frozen=True)
class Deadline:
    """An absolute end (time.monotonic) for one turn, and the share of it the LLM may use."""

    ends_at: float
    budget_s: float
    fallback_reserve_s: float = 0.0
    started_at: float = field(default_factory=time.monotonic)

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        seconds = max(0.0, seconds)
        reserve = min(MAX_FALLBACK_RESERVE_S, seconds * FALLBACK_RESERVE_FRACTION)
        now = time.monotonic()
        return cls(ends_at=now + seconds, budget_s=seconds, fallback_reserve_s=reserve, started_at=now)

    def remaining(self) -> float:
        """Seconds until the whole turn must be over."""
        return max(0.0, self.ends_at - time.monotonic())

    def remaining_for_llm(self) -> float:
        """Seconds the LLM may still use; the rest is kept for the fallback answer."""
        return max(0.0, self.ends_at - self.fallback_reserve_s - time.monotonic())

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    @property
    def expired(self) -> bool:
        return self.remaining_for_llm() <= 0.0


_current: ContextVar[Deadline | None] = ContextVar("sommelier_turn_deadline", default=None)


@contextmanager
def turn_deadline(deadline: Deadline) -> Iterator[Deadline]:
    """Make `deadline` the budget of every turn run inside this block (the caller's request scope)."""
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


def lambda_turn_deadline(context: Any) -> Deadline | None:
    """The budget of a turn run by this Lambda invocation: its remaining time minus the delivery reserve,
    capped by LLM_TURN_BUDGET_S when that is set. None when the context cannot tell (local runs)."""
    remaining_ms = getattr(context, "get_remaining_time_in_millis", None)
    if remaining_ms is None:
        return None
    try:
        remaining = float(remaining_ms()) / 1000.0
    except (TypeError, ValueError):
        return None
    budget = remaining - env_seconds("DELIVERY_RESERVE_S", DEFAULT_DELIVERY_RESERVE_S)
    configured = env("LLM_TURN_BUDGET_S")
    if configured is not None:
        budget = min(budget, env_seconds("LLM_TURN_BUDGET_S", DEFAULT_TURN_BUDGET_S))
    return Deadline.after(max(budget, 0.0))


def current_turn_deadline() -> Deadline:
    """The deadline set by the caller (the Lambda handler), else a fresh one of LLM_TURN_BUDGET_S."""
    deadline = _current.get()
    if deadline is not None:
        return deadline
    return Deadline.after(env_seconds("LLM_TURN_BUDGET_S", DEFAULT_TURN_BUDGET_S))
