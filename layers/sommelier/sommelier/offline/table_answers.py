"""The answers about the wines on the table (offline/table.py): a price, a sweetness, a serving temperature, a
dish, which of them is drier, sweeter, lighter or cheaper, the difference between two, and «выбери одно» —
each from the wines' own catalogue rows, with no new search."""

from __future__ import annotations

from collections.abc import Callable

from sommelier import language
from sommelier.domain.answer import MAX_CLOSING, MAX_INTRO, SommelierResponse
from sommelier.domain.wine import SWEETNESS_LEVELS, SWEETNESS_RU, WINE_TYPE_RU, Wine
from sommelier.offline.request_words import food_dative
from sommelier.offline.table import TableQuestion, pointed, read_table_question, table_of
from sommelier.offline.wine_cards import matching_pairings
from sommelier.offline.wording import cap, clip, format_price, pick, plain

_SERVING = language.data("table.json")["serving"]
_BODY_WORDS = {1: "очень лёгкое", 2: "лёгкое", 3: "средней полноты", 4: "насыщенное", 5: "мощное"}
_GENITIVE = {"red": "красного", "white": "белого", "rose": "розового", "sparkling": "игристого"}
_CLOSINGS = (
    "Спросите о любом из них ещё — или подберу другие.",
    "Могу рассказать о них подробнее или подобрать что-то другое.",
)


def _name(wine: Wine) -> str:
    return plain(wine.name)


def _sweetness_rank(wine: Wine) -> int:
    return SWEETNESS_LEVELS.index(wine.sweetness) if wine.sweetness in SWEETNESS_LEVELS else 0


def _style(wine: Wine) -> str:
    colour = WINE_TYPE_RU.get(wine.wine_type, "")
    sweetness = SWEETNESS_RU.get(wine.sweetness, "")
    if wine.wine_type == "sparkling" and wine.sweetness == "dry":
        sweetness = "брют"
    return " ".join(p for p in (colour, sweetness) if p)


def serving_range(wine: Wine) -> tuple[int, int]:
    """The serving temperature of a wine's style (table.json `serving`: the first row its style meets)."""
    for row in _SERVING:
        if row.get("wine_type") not in (None, wine.wine_type) or row.get("sweetness") not in (None, wine.sweetness):
            continue
        if "body_max" in row and (wine.body is None or wine.body > row["body_max"]):
            continue
        return int(row["from"]), int(row["to"])
    return 12, 16


_WORDING = language.data("table.json")["wording"]
_COMPARATIVE: dict[str, str] = _WORDING["comparative"]
_MEASURES: dict[str, tuple[Callable[[Wine], float], int, str]] = {
    # comparison → (measure, sign of the winner: -1 the smallest, 1 the largest, its comparative)
    "drier": (lambda w: _sweetness_rank(w), -1, _COMPARATIVE["drier"]),
    "sweeter": (lambda w: _sweetness_rank(w), 1, _COMPARATIVE["sweeter"]),
    "lighter": (lambda w: float(w.body or 3), -1, _COMPARATIVE["lighter"]),
    "fuller": (lambda w: float(w.body or 3), 1, _COMPARATIVE["fuller"]),
    "cheaper": (lambda w: float(w.price_rub), -1, _COMPARATIVE["cheaper"]),
    "pricier": (lambda w: float(w.price_rub), 1, _COMPARATIVE["pricier"]),
}


def _fact(wine: Wine, comparison: str) -> str:
    if comparison in ("drier", "sweeter"):
        return _style(wine)
    if comparison in ("lighter", "fuller"):
        return _BODY_WORDS.get(int(wine.body), "средней полноты") if wine.body else "полнота не указана"
    return format_price(wine.price_rub)


def _compared(wines: list[Wine], comparison: str) -> str:
    measure, sign, word = _MEASURES[comparison]
    if len(wines) < 2:
        wine = wines[0]
        return f"{_name(wine)} — {_fact(wine, comparison)}."
    values = [measure(w) * sign for w in wines]
    best = max(values)
    winners = [w for w, v in zip(wines, values, strict=True) if v == best]
    facts = "; ".join(f"{_name(w)} — {_fact(w, comparison)}" for w in wines)
    if len(winners) == len(wines):
        return f"Здесь они равны: {facts}."
    if len(winners) > 1:
        return f"{word.capitalize()} — {' и '.join(_name(w) for w in winners)}: {facts}."
    return f"{word.capitalize()} из них — {_name(winners[0])}: {facts}."


def _price(wines: list[Wine]) -> str:
    return " ".join(f"{_name(w)} стоит {format_price(w.price_rub)}." for w in wines)


def _style_check(wine: Wine, key: str, value: str) -> str:
    if key == "sweetness" and wine.sweetness == value:
        return f"Да, {_name(wine)} — {_style(wine)}."
    return f"Нет, {_name(wine)} не {SWEETNESS_RU.get(value, value)}, а {_style(wine)}."


def _temperature(wines: list[Wine]) -> str:
    parts = []
    for wine in wines:
        low, high = serving_range(wine)
        parts.append(f"{_name(wine)} ({_style(wine)}) подают при {low}–{high} °C.")
    return (
        " ".join(parts) + " Бутылку из комнаты стоит подержать в холодильнике, пока она не остынет до этой температуры."
    )


def _dish(wines: list[Wine]) -> str:
    parts = []
    for wine in wines:
        foods = [plain(f) for f in wine.food_pairings[:4] if f]
        if foods:
            parts.append(f"К {_name(wine)} подойдут {', '.join(foods)}.")
        else:
            parts.append(
                f"Для {_name(wine)} в каталоге нет сочетаний с блюдами, но {_style(wine)} вино обычно подают к закускам."
            )
    return " ".join(parts)


def _difference(wines: list[Wine]) -> str:
    first, second = wines[0], wines[1]
    lines = []
    if first.wine_type != second.wine_type or first.sweetness != second.sweetness:
        lines.append(f"{_name(first)} — {_style(first)}, {_name(second)} — {_style(second)}")
    grapes_a, grapes_b = ", ".join(first.grape_varieties), ", ".join(second.grape_varieties)
    if grapes_a != grapes_b and grapes_a and grapes_b:
        lines.append(f"сорта: {grapes_a} против {grapes_b}")
    if first.region != second.region:
        lines.append(f"происхождение: {plain(first.region)} и {plain(second.region)}")
    if first.body and second.body and first.body != second.body:
        lighter = first if first.body < second.body else second
        lines.append(f"{_name(lighter)} легче по телу")
    if first.price_rub != second.price_rub:
        cheaper = first if first.price_rub < second.price_rub else second
        lines.append(f"{_name(cheaper)} дешевле ({format_price(first.price_rub)} и {format_price(second.price_rub)})")
    if not lines:
        return f"{_name(first)} и {_name(second)} очень близки: один стиль, сорт и цена."
    return f"Чем отличаются {_name(first)} и {_name(second)}: " + "; ".join(lines) + "."


def _describe(wines: list[Wine]) -> str:
    parts = []
    for wine in wines:
        body = _BODY_WORDS.get(int(wine.body)) if wine.body else None
        grapes = ", ".join(wine.grape_varieties)
        facts = ", ".join(p for p in (_style(wine), body, grapes, plain(wine.region)) if p)
        note = plain(language.brief(wine.tasting_notes or wine.description or "", 200, skip_colour=True))
        parts.append(f"{_name(wine)}: {facts}, {format_price(wine.price_rub)}." + (f" {note}" if note else ""))
    return " ".join(parts)


def _choice(wines: list[Wine], comparison: str | None, query: str, food: str | None = None) -> str:
    """One of them, with the reason: by the asked measure, else the first (the search's best match for the
    request), and what sets it apart from the others."""
    if comparison in _MEASURES:
        measure, sign, word = _MEASURES[comparison]
        chosen = max(wines, key=lambda w: measure(w) * sign)
        return f"Я бы взял {_name(chosen)}: оно {word} остальных ({_fact(chosen, comparison)})."
    if food:
        fitting = [w for w in wines if matching_pairings(w, food)]
        if not fitting:
            return f"Ни одно из них в каталоге не отмечено {food_dative(food)}. Напишите «вино {food_dative(food)}» — подберу отдельно."
        chosen = fitting[0]
        pairs = ", ".join(plain(p) for p in matching_pairings(chosen, food)[:2])
        return f"{food_dative(food).capitalize()} я бы взял {_name(chosen)} ({_style(chosen)}, {format_price(chosen.price_rub)}): в каталоге оно отмечено к таким блюдам, как {pairs}."
    chosen = wines[0]
    reasons = []
    others = [w for w in wines if w.id != chosen.id]
    if others and all(chosen.price_rub < w.price_rub for w in others):
        reasons.append("самое доступное из них")
    if others and chosen.body and all((w.body or 0) < chosen.body for w in others):
        reasons.append("самое насыщенное")
    foods = [plain(f) for f in chosen.food_pairings[:2]]
    if foods:
        reasons.append(f"хорошо к таким блюдам, как {', '.join(foods)}")
    reason = ", ".join(reasons) or "лучше всего совпало с вашим запросом"
    lead = pick(_WORDING["choice_leads"], query, chosen.id)
    return f"{lead} {_name(chosen)} ({_style(chosen)}, {format_price(chosen.price_rub)}): {reason}."


def table_answer(question: TableQuestion, wines: list[Wine], *, query: str) -> SommelierResponse:
    """The answer to a question about the wines it points at (in the order they were shown)."""
    if not wines:
        colour = WINE_TYPE_RU.get(question.colour or "", "")
        genitive = _GENITIVE.get(question.colour or "", "такого")
        intro = f"Среди показанных вин {genitive} нет. Напишите «а {colour or 'другое'}?» — подберу отдельно."
    elif question.ask == "choose":
        intro = _choice(wines, question.comparison, query, question.food)
    elif question.comparison:
        intro = _compared(wines, question.comparison)
    elif question.ask == "style" and question.style is not None:
        intro = " ".join(_style_check(w, *question.style) for w in wines)
    elif question.ask == "sweetness":
        intro = " ".join(f"{_name(w)} — {_style(w)}." for w in wines)
    elif question.ask == "temperature":
        intro = _temperature(wines)
    elif question.ask == "dish":
        intro = _dish(wines)
    elif question.ask == "difference":
        intro = _difference(wines) if len(wines) >= 2 else _describe(wines)
    elif question.ask == "describe":
        intro = _describe(wines)
    else:
        intro = _price(wines)
    closing = pick(_CLOSINGS, query, "table")
    return SommelierResponse(
        response_type="informational", intro=clip(cap(intro), MAX_INTRO), closing=clip(closing, MAX_CLOSING)
    )


def on_table(
    text: str, ids: list[str], since: list[str], fetch: Callable[[list[str]], list[Wine]]
) -> SommelierResponse | None:
    """The answer to a question about the wines `ids` (the last answer's, in order; `since`: the customer's
    messages after it), their rows read by `fetch`; None when the message asks about something else."""
    by_id = {w.id: w for w in fetch(ids)}
    shown = [by_id[i] for i in ids if i in by_id]
    question = read_table_question(text, shown)
    if question is None:
        return None
    table = table_of(shown, since)
    return table_answer(question, pointed(question, table.shown, table.focus), query=text)
