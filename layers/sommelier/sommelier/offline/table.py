"""The wines on the table (the reader's rule 5): a question about the wines the bot has just shown — «сколько
стоит первое?», «а второе — оно сухое?», «какое из них легче?», «белое из них к рыбе?», «выбери одно» — points
at them by position, by name, by «оно» or by colour, and is answered from the catalogue without a new search.
The words are language/data/table.json's; which wines a question points at is decided here."""

from __future__ import annotations

import re
from typing import NamedTuple

from sommelier import language
from sommelier.domain.wine import SWEETNESS_LEVELS, Wine
from sommelier.language.filter_words import value_cues
from sommelier.offline.filters import read_filters
from sommelier.offline.follow_ups import offered
from sommelier.offline.intent import QueryIntent
from sommelier.offline.message import WORD, prepare

_DATA = language.data("table.json")


class _Hit(NamedTuple):
    value: str
    start_char: int


class _Phrases:
    """Phrases → values, matched as written at word boundaries. Not on stems: the table's words lean on «из»,
    «с», «под», which stem matching skips as linking words («что из них» is no «что-нибудь из Италии»)."""

    def __init__(self, table: dict[str, dict[str, list[str]]]):
        self._patterns = [
            (value, re.compile(language.alternation(p.replace("-", " ") for p in (*spec["words"], *spec["forms"]))))
            for value, spec in table.items()
        ]

    def find(self, t: str) -> list[_Hit]:
        hits = [_Hit(value, m.start()) for value, pattern in self._patterns for m in pattern.finditer(t)]
        return sorted(hits, key=lambda h: h.start_char)

    def search(self, t: str) -> _Hit | None:
        found = self.find(t)
        return found[0] if found else None


_POSITION = _Phrases(_DATA["positions"])
_FOCUS = _Phrases({"focus": _DATA["focus"]})
_AMONG = _Phrases({"among": _DATA["among"]})
_QUESTION = _Phrases(_DATA["questions"])
_COMPARISON = _Phrases(_DATA["comparisons"])
_TYPE_CUES = value_cues("wine_type")
_SWEETNESS_CUES = value_cues("sweetness")
# «на первое суп, на второе утка»: a course of the meal, not a wine.
_COURSE_BEFORE = re.compile(r"(?:^|\s)на\s*$")
# Which question a message asks when it has the words of several («чем отличаются» is no «с чем»).
_PRECEDENCE = ("choose", "difference", "temperature", "price", "sweetness", "dish", "describe")
_INDEX = {"first": 0, "second": 1, "third": 2, "last": -1}
# Name words too common to point at one wine («Каберне» of two producers still points at both).
_MIN_NAME_WORD = 4


class TableQuestion(NamedTuple):
    """A question about the shown wines: what it asks, and how it points at them."""

    ask: str | None  # price, sweetness, temperature, dish, choose, difference, describe, style (a yes/no)
    comparison: str | None  # drier, sweeter, lighter, fuller, cheaper, pricier
    positions: tuple[int, ...]  # 0, 1, 2, -1
    focus: bool  # «оно», «это вино»
    among: bool  # «из них», «какое из»
    colour: str | None  # «белое из них»
    style: tuple[str, str] | None  # «оно сухое?» → ("sweetness", "dry")
    names: tuple[str, ...]  # the shown wines' ids named in the message
    food: str | None = None  # «какое из них лучше к рыбе?»: the dish the choice is for

    @property
    def points(self) -> bool:
        """It points at the table itself (not only asks something a new request may ask too)."""
        return bool(self.positions or self.focus or self.among or self.names)


def _free(t: str, matches: list[_Hit]) -> list[_Hit]:
    return [m for m in matches if not _COURSE_BEFORE.search(t[: m.start_char])]


def _named(t: str, shown: list[Wine]) -> tuple[str, ...]:
    """The shown wines the message names by a word of their own name («а Мукузани сухое?», «Malbec или Rioja»)."""
    stems = {language.stem(w) for w in WORD.findall(language.fold_accents(t)) if len(w) >= _MIN_NAME_WORD}
    named: list[str] = []
    for wine in shown:
        words = [
            w for w in WORD.findall(language.normalize(language.fold_accents(wine.name))) if len(w) >= _MIN_NAME_WORD
        ]
        if words and any(language.stem(w) in stems for w in words):
            named.append(wine.id)
    return tuple(named) if len(named) < len(shown) or len(shown) == 1 else ()


def read_table_question(text: str, shown: list[Wine]) -> TableQuestion | None:
    """The question about the shown wines this message asks, or None when it asks for something else (a new
    request, «а послаще?» without pointing at them, a greeting). `shown` are the wines of the last answer."""
    if not shown:
        return None
    _, t = prepare(text or "")
    return _read(text, len(shown), _named(t, shown))


def asks_about_table(text: str, count: int) -> bool:
    """Does the message ask about the `count` wines shown (by position, «оно», «из них», a question only the
    table answers)? Read without the wines themselves, so a name alone does not count."""
    return count > 0 and may_ask_about_table(text) and _read(text, count, ()) is not None


def _read(text: str, count: int, names: tuple[str, ...]) -> TableQuestion | None:
    raw, t = prepare(text or "")
    question = _question(t, count, names)
    if question.points:
        if question.ask == "choose":
            question = question._replace(food=read_filters(raw, t).filters.get("food_pairing"))
        return question if (question.ask or question.comparison) else None
    # Not pointing at them: only a question a new request would not ask, in a message that states no filters.
    if question.comparison and question.ask != "choose" or question.ask not in _UNPOINTED:
        return None
    reading = read_filters(raw, t)
    return question if not reading.filters and reading.mood is None else None


_UNPOINTED = ("price", "temperature", "choose", "difference", "dish")


def _first(cues: language.Cues, t: str) -> str | None:
    hit = cues.search(t)
    return str(hit.value) if hit is not None else None


def _question(t: str, count: int, names: tuple[str, ...]) -> TableQuestion:
    """What the message asks and how it points, before deciding whether it is about the table."""
    positions = tuple(dict.fromkeys(_INDEX[m.value] for m in _free(t, _POSITION.find(t))))
    positions = tuple(p for p in positions if p == -1 or p < count)
    asks = {m.value for m in _QUESTION.find(t)}
    comparisons = [m.value for m in _COMPARISON.find(t)]
    focus = bool(_FOCUS.find(t))
    among = bool(_AMONG.find(t))
    colour = _first(_TYPE_CUES, t) if among else None
    sweetness = _first(_SWEETNESS_CUES, t) if positions or focus or names else None
    style = ("sweetness", sweetness) if sweetness else None
    ask = next((a for a in _PRECEDENCE if a in asks), None)
    ask = ask or ("style" if style else None) or ("describe" if colour else None)  # «оно сухое?», «а белое из них?»
    return TableQuestion(ask, comparisons[0] if comparisons else None, positions, focus, among, colour, style, names)


def pointed(question: TableQuestion, shown: list[Wine], focus: list[Wine]) -> list[Wine]:
    """The wines the question points at: by position, by name, by colour among them, «оно» (the wine the
    conversation last spoke of, else the only one shown), else all of them."""
    if question.positions:
        return list({shown[p].id: shown[p] for p in question.positions}.values())
    if question.names:
        return [w for w in shown if w.id in question.names]
    if question.colour:
        return [w for w in shown if w.wine_type == question.colour]
    if question.focus and not question.among:
        if len(focus) == 1:
            return focus
        if len(shown) == 1:
            return shown
    return list(shown)


_ANY_CUE = (_POSITION, _FOCUS, _AMONG, _QUESTION, _COMPARISON)


def may_ask_about_table(text: str) -> bool:
    """A word of the table's (a position, «оно», «из них», a question or a comparison) is in the message: only
    then are the shown wines read to see whether it asks about them."""
    _, t = prepare(text or "")
    return any(cues.search(t) is not None for cues in _ANY_CUE)


class Table(NamedTuple):
    """The wines of the last answer that showed wines, in their order, and those the talk since spoke of."""

    shown: list[Wine]
    focus: list[Wine]


def table_of(shown: list[Wine], questions_since: list[str]) -> Table:
    """The table after the questions asked about it since it was shown: «оно» is the wine last pointed at."""
    focus: list[Wine] = []
    for text in questions_since:
        question = read_table_question(text, shown)
        if question is not None and question.points:
            focus = pointed(question, shown, focus)
    return Table(shown, focus)


_STEPS = {"sweeter": 1, "drier": -1}


def sweetness_step(text: str) -> int:
    """«а послаще?», «посуше бы»: +1 or -1 a sweetness level from the wines shown; 0 for anything else (a
    message that points at the shown wines asks about them instead)."""
    _, t = prepare(text or "")
    found = [m.value for m in _COMPARISON.find(t) if m.value in _STEPS]
    if not found or _POSITION.search(t) or _AMONG.search(t) or len(WORD.findall(t)) > 4:
        return 0
    return _STEPS[found[0]]


def stepped_sweetness(levels: list[str], step: int) -> str | None:
    """The sweetness one level past the sweetest (step +1) or the driest (step -1) of `levels`; None past the end."""
    known = [SWEETNESS_LEVELS.index(v) for v in levels if v in SWEETNESS_LEVELS]
    if not known or not step:
        return None
    level = (max(known) if step > 0 else min(known)) + step
    return SWEETNESS_LEVELS[level] if 0 <= level < len(SWEETNESS_LEVELS) else None


def comparisons_in(text: str) -> set[str]:
    """The comparisons a message makes («полегче», «подешевле»): drier, sweeter, lighter, fuller, cheaper, pricier."""
    _, t = prepare(text or "")
    return {hit.value for hit in _COMPARISON.find(t)}


def sweetness_replayed(text: str, previous: QueryIntent | None) -> QueryIntent | None:
    """«а послаще?» replayed from the history: the previous request a level past its own sweetness."""
    if previous is None:
        return None
    level = stepped_sweetness([str(previous.filters.get("sweetness") or "dry")], sweetness_step(text))
    return offered(previous, filters={"sweetness": level}) if level else None


def points_at(text: str, shown: list[Wine]) -> list[Wine]:
    """The shown wines a message points at by position or by a word of their name, whatever it asks or says
    («беру второе», «понравился Мукузани»); [] when it points at none of them."""
    _, t = prepare(text or "")
    positions = [_INDEX[m.value] for m in _free(t, _POSITION.find(t))]
    positions = [p for p in dict.fromkeys(positions) if p == -1 or p < len(shown)]
    if positions and shown:
        return list({shown[p].id: shown[p] for p in positions}.values())
    named = _named(t, shown)
    return [w for w in shown if w.id in named]
