"""The spending limits' own counting, on the in-memory counters: what a turn takes is given back whole when a
counter fails half-way, so a failing store never leaves a reservation that counts as spent."""

from __future__ import annotations

import pytest
from sommelier.settings import LimitSettings
from sommelier.telegram.counters import InMemoryCounters
from sommelier.telegram.limits import SpendingLimits


class FailingOn(InMemoryCounters):
    """In-memory counters whose add of one key raises, as a store that times out does."""

    def __init__(self, failing_prefix: str):
        super().__init__(clock=lambda: 1_800_000_000.0)
        self.failing_prefix = failing_prefix

    def add(self, key: str, amount: float, ttl_s: int) -> float:
        if key.startswith(self.failing_prefix):
            raise TimeoutError("the store did not answer")
        return super().add(key, amount, ttl_s)


def test_a_counter_failing_half_way_gives_back_the_budget_already_reserved():
    counters = FailingOn("turns#")
    limits = SpendingLimits(
        counters, LimitSettings(daily_budget_usd=1.0, monthly_budget_usd=10.0), clock=counters._clock
    )
    with pytest.raises(TimeoutError):
        limits.admit(5, 5)
    assert limits.spent_usd() == (0.0, 0.0)


def test_an_admitted_turn_settles_to_what_it_cost():
    counters = InMemoryCounters(clock=lambda: 1_800_000_000.0)
    limits = SpendingLimits(counters, LimitSettings(daily_budget_usd=1.0), clock=counters._clock)
    admission = limits.admit(5, 5)
    assert admission.llm
    limits.settle(admission, 0.02)
    assert limits.spent_usd()[0] == pytest.approx(0.02)
