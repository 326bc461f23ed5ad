"""Spending limits that stop (RELIABILITY.md lists each, its default and its setting).

- LLM turns per customer a day, across all their chats (LLM_TURNS_PER_USER_DAY); a group counts as one
  customer more (its own count of the same size), never as a fresh budget for each member.
- Voice heard per customer a day (VOICE_MINUTES_PER_USER_DAY).
- The shop's LLM spend a day and a month in dollars (LLM_DAILY_BUDGET_USD, LLM_MONTHLY_BUDGET_USD), from
  the cost each turn records (the provider's, or LLM_PRICE_PER_MTOK's: agent/metadata.turn_cost).

Past a limit the offline responder answers (a voice message is asked to be typed); the customer is told
once a day, kindly, and the owner once a day in the admin chat. How often each limit stopped a turn is
counted for /stats and the weekly report.

A turn reserves its estimated cost before the model is asked and settles the real cost after: two agent
processes that start turns at once each see the other's reservation in the total their add returned, so
the budget is never passed by more than what one turn cost beyond its estimate. The estimate is the
dearest turn this process has seen (a cold start assumes FIRST_TURN_ESTIMATE_USD). Days and months are
counted in UTC.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import NamedTuple

from sommelier.observability.telemetry import record_event
from sommelier.settings import LimitSettings, Settings
from sommelier.telegram.counters import Counters, counters_from_settings

logger = logging.getLogger(__name__)

DAY_TTL_S = 9 * 24 * 3600  # a day's counters outlive the 7 days /stats and the weekly report look back
MONTH_TTL_S = 40 * 24 * 3600
FIRST_TURN_ESTIMATE_USD = 0.05  # three generations of a long prompt at a Sonnet-class price, about
STATS_DAYS = 7

USER_TURNS, GROUP_TURNS, VOICE, DAILY_BUDGET, MONTHLY_BUDGET = (
    "user_turns",
    "group_turns",
    "voice_minutes",
    "daily_budget",
    "monthly_budget",
)
LIMITS = (USER_TURNS, GROUP_TURNS, VOICE, DAILY_BUDGET, MONTHLY_BUDGET)

# What the owner reads: the limit in words, and the setting that changes it.
LIMIT_NAMES = {
    USER_TURNS: "вопросов к LLM от одного покупателя за день",
    GROUP_TURNS: "вопросов к LLM от одной группы за день",
    VOICE: "минут голосовых от одного покупателя за день",
    DAILY_BUDGET: "дневной бюджет LLM магазина",
    MONTHLY_BUDGET: "месячный бюджет LLM магазина",
}
LIMIT_SETTINGS = {
    USER_TURNS: "LLM_TURNS_PER_USER_DAY (параметр LLMTurnsPerUserDay)",
    GROUP_TURNS: "LLM_TURNS_PER_USER_DAY (параметр LLMTurnsPerUserDay)",
    VOICE: "VOICE_MINUTES_PER_USER_DAY (параметр VoiceMinutesPerUserDay)",
    DAILY_BUDGET: "LLM_DAILY_BUDGET_USD (параметр DailyLLMBudgetUSD)",
    MONTHLY_BUDGET: "LLM_MONTHLY_BUDGET_USD (параметр MonthlyLLMBudgetUSD)",
}

# What the customer is told, once a day, above the offline responder's answer.
CUSTOMER_NOTICE = {
    USER_TURNS: (
        "Мы сегодня уже много говорили о вине 🙂 До завтра я подбираю вина попроще — по каталогу, без долгих "
        "рассуждений. Завтра снова отвечу подробно."
    ),
    GROUP_TURNS: (
        "В этой группе сегодня уже много вопросов 🙂 До завтра я подбираю вина попроще — по каталогу, без долгих "
        "рассуждений. Завтра снова отвечу подробно."
    ),
    DAILY_BUDGET: (
        "Сегодня я отвечаю в упрощённом режиме 🙂 Подбираю вина по каталогу, ответы будут короче обычного. "
        "Подробные ответы вернутся завтра."
    ),
    MONTHLY_BUDGET: (
        "Сейчас я отвечаю в упрощённом режиме 🙂 Подбираю вина по каталогу, ответы будут короче обычного."
    ),
}
VOICE_LIMIT_REPLY = (
    "Сегодня я уже выслушал много голосовых 🙂 Напишите, пожалуйста, текстом: к какому блюду или поводу нужно "
    "вино и какой у вас бюджет. Завтра снова смогу слушать."
)


def owner_notice(limit: str, value: str) -> str:
    return (
        f"⚠️ Сработал лимит: {LIMIT_NAMES[limit]} ({value}).\n"
        + (
            "Голосовые сверх лимита бот просит написать текстом."
            if limit == VOICE
            else "Сверх лимита бот отвечает по правилам, без LLM: подборки проще, деньги не тратятся."
        )
        + f"\nЧто сделать: если это обычная нагрузка, поднимите лимит — настройка {LIMIT_SETTINGS[limit]}. "
        "Если похоже на злоупотребление, ничего делать не нужно: лимит сбросится сам "
        + ("в начале месяца (UTC)." if limit == MONTHLY_BUDGET else "в полночь по UTC.")
        + "\nЭто сообщение приходит не чаще раза в день."
    )


class Admission(NamedTuple):
    """May the LLM answer this turn? (``limit``: the one that said no.)"""

    llm: bool
    limit: str | None = None
    tell_customer: bool = False
    reserved: tuple[tuple[str, float, int], ...] = ()  # (counter, amount, ttl) to settle after the turn
    counted: tuple[tuple[str, float, int], ...] = ()  # the turn counts, given back when the LLM was not asked
    estimate: float = 0.0

    @property
    def notice(self) -> str | None:
        return CUSTOMER_NOTICE.get(self.limit or "") if self.tell_customer else None


def _micro(usd: float) -> int:
    """Dollars as whole millionths: the counters add integers, exact in every store."""
    return round(usd * 1_000_000)


def _today(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def _month(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m")


class SpendingLimits:
    def __init__(
        self,
        counters: Counters,
        limits: LimitSettings,
        *,
        notify_owner: Callable[[str], object] | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.counters = counters
        self.limits = limits
        self.notify_owner = notify_owner
        self.clock = clock
        self._estimate = FIRST_TURN_ESTIMATE_USD
        self._seen_cost = False  # the estimate is this process's dearest turn once it has seen one
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ turns
    def admit(self, user_id: int, chat_id: int) -> Admission:
        """Count this turn against every limit it falls under; all or none: a refused turn takes back what it
        added."""
        taken: list[tuple[str, float, int]] = []
        try:
            return self._admit(user_id, chat_id, taken)
        except Exception:  # a counter that fails half-way gives back what the turn had taken already
            self._give_back(taken)
            raise

    def _admit(self, user_id: int, chat_id: int, taken: list[tuple[str, float, int]]) -> Admission:
        now = self.clock()
        day, month = _today(now), _month(now)
        with self._lock:
            estimate = _micro(self._estimate)
        budgets = (
            (DAILY_BUDGET, f"usd#day#{day}", self.limits.day_budget_usd, DAY_TTL_S),
            (MONTHLY_BUDGET, f"usd#month#{month}", self.limits.monthly_budget_usd, MONTH_TTL_S),
        )
        for limit, key, budget, ttl in budgets:
            if budget is None:
                continue
            total = self.counters.add(key, estimate, ttl)
            taken.append((key, estimate, ttl))
            if total > _micro(budget):
                return self._refuse(limit, f"${budget:g}", user_id, day, taken)
        cap = self.limits.turns_per_user_day
        subjects = [(USER_TURNS, f"turns#user#{user_id}#{day}")]
        if chat_id != user_id:  # a group (or a channel's chat): one customer more, with its own count
            subjects.append((GROUP_TURNS, f"turns#chat#{chat_id}#{day}"))
        for limit, key in subjects:
            total = self.counters.add(key, 1, DAY_TTL_S)
            taken.append((key, 1, DAY_TTL_S))
            if total > cap:
                told_whom = user_id if limit == USER_TURNS else chat_id
                return self._refuse(limit, str(cap), told_whom, day, taken)
        reserved = tuple(t for t in taken if t[0].startswith("usd#"))
        counted = tuple(t for t in taken if t[0].startswith("turns#"))
        return Admission(True, reserved=reserved, counted=counted, estimate=estimate / 1_000_000)

    def settle(self, admission: Admission, cost_usd: float | None, llm_calls: int = 1) -> None:
        """The turn is over: its reservation becomes what it cost (None or 0: the LLM was not billed); a turn
        the LLM never saw (the guards stopped it first) does not count toward the customer's turns."""
        cost = max(float(cost_usd or 0.0), 0.0)
        if llm_calls <= 0:
            for key, amount, ttl in admission.counted:
                self.counters.add(key, -amount, ttl)
        if cost > 0:
            with self._lock:
                self._estimate = max(self._estimate, cost) if self._seen_cost else cost
                self._seen_cost = True
        for key, amount, ttl in admission.reserved:
            if _micro(cost) != amount:
                self.counters.add(key, _micro(cost) - amount, ttl)

    # ------------------------------------------------------------------ voice
    def admit_voice(self, user_id: int, seconds: float) -> bool:
        """May this voice message be heard? Its seconds count toward the day's minutes; a refused one's don't."""
        now = self.clock()
        day = _today(now)
        key = f"voice#user#{user_id}#{day}"
        seconds = max(float(seconds), 1.0)
        total = self.counters.add(key, seconds, DAY_TTL_S)
        if total <= self.limits.voice_minutes_per_user_day * 60:
            return True
        self._refuse(
            VOICE, f"{self.limits.voice_minutes_per_user_day:g} мин", user_id, day, [(key, seconds, DAY_TTL_S)]
        )
        return False

    # ------------------------------------------------------------------ figures
    def hits(self, days: int = STATS_DAYS) -> dict[str, int]:
        """How many turns each limit stopped in the last ``days`` days (today included)."""
        now = self.clock()
        found: dict[str, int] = {}
        for limit in LIMITS:
            total = 0.0
            for back in range(days):
                day = _today(now - back * 86400)
                total += self.counters.value(f"hits#{limit}#{day}")
            if total:
                found[limit] = int(total)
        return found

    def spent_usd(self) -> tuple[float, float]:
        """The shop's LLM spend (with the reservations of turns under way) today and this month, in dollars."""
        now = self.clock()
        day = self.counters.value(f"usd#day#{_today(now)}")
        month = self.counters.value(f"usd#month#{_month(now)}")
        return day / 1_000_000, month / 1_000_000

    # ------------------------------------------------------------------ plumbing
    def _give_back(self, taken: list[tuple[str, float, int]]) -> None:
        for key, amount, ttl in taken:
            try:
                self.counters.add(key, -amount, ttl)
            except Exception as exc:  # what can't be given back stays counted: never spending past a limit
                logger.warning("a spending counter %s was not given back: %s", key, exc)
        taken.clear()  # given back once, whatever fails after

    def _refuse(self, limit: str, value: str, whom: int, day: str, taken: list[tuple[str, float, int]]) -> Admission:
        self._give_back(taken)
        self.counters.add(f"hits#{limit}#{day}", 1, DAY_TTL_S)
        record_event(f"LimitReached_{limit}")
        logger.info("spending limit %s reached (%s): the LLM does not answer", limit, value)
        tell = self.counters.first(f"told#{limit}#{whom}#{day}", DAY_TTL_S)
        if self.notify_owner is not None and self.counters.first(f"owner#{limit}#{day}", DAY_TTL_S):
            try:
                self.notify_owner(owner_notice(limit, value))
            except Exception as exc:  # the owner's notice never breaks a customer's turn
                logger.warning("the owner was not told of limit %s: %s", limit, exc)
        return Admission(False, limit, tell_customer=tell)


def limits_from_settings(settings: Settings, notify_owner: Callable[[str], object] | None = None) -> SpendingLimits:
    return SpendingLimits(counters_from_settings(settings), settings.limits, notify_owner=notify_owner)


__all__ = [
    "CUSTOMER_NOTICE",
    "LIMITS",
    "LIMIT_NAMES",
    "VOICE_LIMIT_REPLY",
    "Admission",
    "SpendingLimits",
    "limits_from_settings",
    "owner_notice",
]
