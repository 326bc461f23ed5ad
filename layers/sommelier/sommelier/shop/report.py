"""The weekly report for the shop owner: what customers asked for, what they liked, what we don't stock,
and what the LLM cost. Figures come from the tool operation `report_data`; the chart is drawn by
matplotlib, imported only when a chart is drawn (it is not in the shared layer)."""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sommelier.agent.care import care_kind
from sommelier.agent.shop_desk import topics
from sommelier.domain.errors import PortError
from sommelier.domain.pricing import parse_price
from sommelier.domain.shop import ReportData, WineVotes
from sommelier.domain.wine import WINE_TYPE_RU
from sommelier.language.personal import mask_personal
from sommelier.offline.reader import read_query
from sommelier.repositories.ports import ShopRepository
from sommelier.settings import LLMSettings

# Price bands of the report, by the top of what a customer would pay (₽).
PRICE_BANDS: tuple[tuple[float, str], ...] = (
    (1000, "до 1 000 ₽"),
    (2000, "1 000–2 000 ₽"),
    (3000, "2 000–3 000 ₽"),
    (5000, "3 000–5 000 ₽"),
    (float("inf"), "от 5 000 ₽"),
)
# Turn modes (agent.loop) in which the LLM was meant to answer but the offline rules, the catalogue
# list or a degraded answer did; and every mode of a turn that went to the LLM at all.
FALLBACK_MODES = {"offline_fallback", "catalog_fallback", "degraded"}
LLM_MODES = {"llm", "guard_output"} | FALLBACK_MODES
# Dollars per million tokens (prompt, completion); defaults are anthropic/claude-sonnet-4's list price.
DEFAULT_PRICE_PER_MTOK = (3.0, 15.0)
TOP = 5


class ReportError(ValueError):
    pass


def parse_since(text: str) -> timedelta:
    """'7d', '24h', '2w' → a timedelta."""
    match = re.fullmatch(r"\s*(\d{1,4})\s*([hdw])\s*", text or "")
    if not match:
        raise ReportError(f"--since must look like 7d, 24h or 2w, not {text!r}")
    amount, unit = int(match.group(1)), match.group(2)
    delta = {"h": timedelta(hours=amount), "d": timedelta(days=amount), "w": timedelta(weeks=amount)}[unit]
    if not timedelta(hours=1) <= delta <= timedelta(days=366):
        raise ReportError("--since must be from 1h to 366d")
    return delta


def llm_prices(llm: LLMSettings) -> tuple[float, float]:
    """LLM_PRICE_PER_MTOK="3,15[,0.3]": dollars per million prompt and completion tokens (domain/pricing.py;
    the report's stored tokens do not tell cached ones apart, so the cached price is not used here)."""
    if llm.price_per_mtok is None:
        return DEFAULT_PRICE_PER_MTOK
    try:
        price = parse_price(llm.price_per_mtok)
    except ValueError as exc:
        raise ReportError(str(exc)) from exc
    return price.prompt, price.completion


def price_band(filters: dict[str, Any]) -> str | None:
    """The band of a budget: «до 2000» → its top, «около 3 тысяч» (a range) → its middle, «от 5000» → its floor."""
    low, high = filters.get("price_min"), filters.get("price_max")
    if low is None and high is None:
        return None
    if low is not None and high is not None:
        budget = (float(low) + float(high)) / 2
    else:
        budget = float(high if high is not None else low or 0)
    return next(label for limit, label in PRICE_BANDS if budget <= limit)


@dataclass
class WeeklyReport:
    since: datetime
    until: datetime
    turns: int
    customers: int
    votes: list[WineVotes]
    types: list[tuple[str, int]]
    price_bands: list[tuple[str, int]]
    dishes: list[tuple[str, int]]
    grapes: list[tuple[str, int]]
    unmet: list[tuple[str, int]]
    llm_turns: int
    fallback_turns: int
    cost_usd: float
    modes: dict[str, int] = field(default_factory=dict)
    shop_and_care: int = 0  # questions about the shop, and age and health turns: counted apart from demand
    limit_hits: dict[str, int] | None = None  # how often each spending limit stopped the LLM (None: not read)

    @property
    def fallback_rate(self) -> float | None:
        return self.fallback_turns / self.llm_turns if self.llm_turns else None

    @property
    def cost_per_1000_turns(self) -> float | None:
        return self.cost_usd / self.turns * 1000 if self.turns else None

    @property
    def cost_per_turn(self) -> float | None:
        return self.cost_usd / self.turns if self.turns else None

    @property
    def cost_per_week(self) -> float:
        days = max((self.until - self.since).total_seconds() / 86400, 1 / 24)
        return self.cost_usd * 7 / days


def _normalised(text: str) -> str:
    return " ".join(text.split())[:80].rstrip(" .,!?").casefold()


def build_report(data: ReportData, prices: tuple[float, float] = DEFAULT_PRICE_PER_MTOK) -> WeeklyReport:
    """The report from `report_data`'s figures: each question read with the offline responder's reader."""
    prompt_price, completion_price = prices
    modes = {m.mode: m.turns for m in data.modes}
    prompt_tokens = sum(m.prompt_tokens for m in data.modes)
    completion_tokens = sum(m.completion_tokens for m in data.modes)
    types: Counter[str] = Counter()
    bands: Counter[str] = Counter()
    dishes: Counter[str] = Counter()
    grapes: Counter[str] = Counter()
    unmet: Counter[str] = Counter()
    apart = 0
    for query in data.queries:
        if care_kind(query.text) is not None or topics(query.text):
            apart += 1  # the shop's questions and the care turns are not demand for a wine (agent.care)
            continue
        intent = read_query(query.text)
        if intent.kind != "recommendation":
            continue
        filters = intent.filters
        if filters.get("wine_type"):
            types[WINE_TYPE_RU.get(filters["wine_type"], filters["wine_type"])] += 1
        band = price_band(filters)
        if band:
            bands[band] += 1
        if filters.get("food_pairing"):
            dishes[str(filters["food_pairing"]).casefold()] += 1
        if filters.get("grape_variety"):
            grapes[str(filters["grape_variety"])] += 1
        if not query.wines_shown:  # masked: the owner reads what was asked, never who asked it
            unmet[_normalised(mask_personal(query.text))] += 1
    band_order = [label for _, label in PRICE_BANDS]
    return WeeklyReport(
        since=datetime.fromisoformat(data.since),
        until=datetime.fromisoformat(data.until),
        turns=sum(modes.values()),
        customers=data.customers,
        votes=data.votes,
        types=types.most_common(TOP),
        price_bands=sorted(bands.items(), key=lambda kv: band_order.index(kv[0])),
        dishes=dishes.most_common(TOP),
        grapes=grapes.most_common(TOP),
        unmet=unmet.most_common(TOP),
        llm_turns=sum(n for mode, n in modes.items() if mode in LLM_MODES),
        fallback_turns=sum(n for mode, n in modes.items() if mode in FALLBACK_MODES),
        cost_usd=(prompt_tokens * prompt_price + completion_tokens * completion_price) / 1_000_000,
        modes=modes,
        shop_and_care=apart,
    )


def fetch_report(
    shop: ShopRepository, since: timedelta, prices: tuple[float, float], now: datetime | None = None
) -> WeeklyReport:
    until = now or datetime.now(UTC)
    try:
        data = shop.report_data((until - since).isoformat(), until.isoformat())
    except PortError as exc:
        raise ReportError(f"the report's figures could not be read: {exc}") from exc
    return build_report(data, prices)


def _listing(pairs: list[tuple[str, int]]) -> str:
    return ", ".join(f"{name} — {count}" for name, count in pairs) if pairs else "нет данных"


def _wine_name(vote: WineVotes) -> str:
    vintage = vote.vintage_year
    return f"{vote.name} ({vote.producer}{', ' + str(vintage) if vintage else ''})"


def report_text(report: WeeklyReport) -> str:
    period = f"{report.since:%d.%m}–{report.until:%d.%m.%Y}"
    lines = [
        f"📊 Отчёт сомелье за {period}",
        f"Вопросов: {report.turns}, покупателей: {report.customers}.",
        "",
        "Оценки вин:",
    ]
    if report.votes:
        lines += [f"• {_wine_name(v)}: 👍 {v.up} / 👎 {v.down}" for v in report.votes[:10]]
    else:
        lines.append("• оценок не было")
    lines += [
        "",
        f"Чаще всего спрашивали: {_listing(report.types)}.",
        f"Бюджет: {_listing(report.price_bands)}.",
        f"Блюда: {_listing(report.dishes)}.",
        f"Сорта: {_listing(report.grapes)}.",
        "",
        "Искали, но не нашли в каталоге:",
    ]
    lines += [f"• «{text}» — {count}" for text, count in report.unmet] or ["• такого не было"]
    if report.shop_and_care:
        lines.append(f"Вопросов о магазине, о возрасте и здоровье (не в спросе): {report.shop_and_care}")
    rate = report.fallback_rate
    per_1000 = report.cost_per_1000_turns
    lines += [
        "",
        "LLM: "
        + (
            f"ответы без модели (резервный режим) — {rate:.0%} из {report.llm_turns}"
            if rate is not None
            else "не использовалась"
        )
        + (f"; примерная стоимость — ${per_1000:.2f} на 1 000 вопросов" if per_1000 is not None else "")
        + f" (${report.cost_usd:.2f} за период).",
        (
            f"Стоимость LLM: ≈ ${report.cost_per_turn:.4f} за вопрос, ≈ ${report.cost_per_week:.2f} в неделю."
            if report.cost_per_turn is not None
            else "Стоимость LLM: вопросов не было."
        ),
    ]
    if report.limit_hits is not None:
        from sommelier.shop.admin import limits_text

        said = limits_text(report.limit_hits).removeprefix("• ").rstrip()
        lines.append(said[:1].upper() + said[1:] + ".")
    return "\n".join(lines)


def report_chart(report: WeeklyReport) -> bytes:
    """A PNG of four panels: votes per wine, asked-for types, price bands, and dishes."""
    import matplotlib

    matplotlib.use("Agg")  # no display in Lambda or CI
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(12, 8), dpi=100)
    figure.suptitle(
        f"Сомелье: {report.since:%d.%m}–{report.until:%d.%m.%Y} · вопросов {report.turns} · покупателей {report.customers}"
    )
    votes = report.votes[:8]
    names = [v.name[:28] for v in votes]
    ax = axes[0][0]
    ax.barh(names, [v.up for v in votes], color="#4caf50")
    ax.barh(names, [-v.down for v in votes], color="#e53935")
    ax.set_title("Оценки по винам: нравится → , ← не нравится")
    ax.invert_yaxis()
    for ax, title, pairs in (
        (axes[0][1], "Типы вина", report.types),
        (axes[1][0], "Бюджет", report.price_bands),
        (axes[1][1], "Блюда", report.dishes),
    ):
        ax.bar([p[0] for p in pairs], [p[1] for p in pairs], color="#8e244d")
        ax.set_title(title)
        ax.tick_params(axis="x", labelrotation=20)
        if not pairs:
            ax.text(0.5, 0.5, "нет данных", ha="center", va="center", transform=ax.transAxes)
    figure.tight_layout()
    out = io.BytesIO()
    figure.savefig(out, format="png")
    plt.close(figure)
    return out.getvalue()
