"""A store's opening hours as the owner writes them («ежедневно 10:00–22:00», «пн–пт 10:00–21:00,
сб–вс 11:00–20:00», «вс выходной»), read into a week: per weekday the opening and closing minute, or closed.

Written by hand: the owner's Russian day names and ranges are a small grammar no library reads.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sommelier.language.vocabulary import data

_GRAMMAR = data("shop_words.json")["hours_grammar"]  # the words of opening hours are data
DAY_NAMES: tuple[str, ...] = tuple(_GRAMMAR["day_names"])
_DAY_STARTS: tuple[str, ...] = tuple(_GRAMMAR["day_starts"])
_FULL_DAY_STEMS: tuple[str, ...] = tuple(_GRAMMAR["day_stems"])
_EVERY_DAY: tuple[str, ...] = tuple(_GRAMMAR["every_day"])
_WEEKDAYS: tuple[str, ...] = tuple(_GRAMMAR["weekdays"])
_WEEKEND: tuple[str, ...] = tuple(_GRAMMAR["weekend"])
_CLOSED: tuple[str, ...] = tuple(_GRAMMAR["closed"])
_ALL_DAY: tuple[str, ...] = tuple(_GRAMMAR["all_day"])
_FILLERS = frozenset(_GRAMMAR["fillers"])

_TOKEN = re.compile(_GRAMMAR["token"], re.IGNORECASE)  # a time range, a dash or «по», a word


class Opening(NamedTuple):
    opens: int  # minutes after midnight
    closes: int  # minutes after midnight; at or before `opens`: past midnight (1440 = midnight)

    def is_open(self, minute: int) -> bool:
        if self.closes > self.opens:
            return self.opens <= minute < self.closes
        return minute >= self.opens or minute < self.closes

    def text(self) -> str:
        if self.opens == 0 and self.closes in (0, 1440):
            return "круглосуточно"
        return f"с {_clock(self.opens)} до {_clock(self.closes)}"


Week = dict[int, Opening | None]  # weekday (0 = Monday) → its hours, None: closed; a missing day: not stated


class HoursError(ValueError):
    """Opening hours that cannot be read (the message is Russian, for the owner)."""


def _clock(minute: int) -> str:
    minute %= 1440
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _day(word: str) -> int | None:
    word = word.lower().replace("ё", "е")
    if len(word) <= 3 and word[:2] in _DAY_STARTS:
        return _DAY_STARTS.index(word[:2])
    for i, stem in enumerate(_FULL_DAY_STEMS):
        if word.startswith(stem):
            return i
    return None


def _phrase(text: str, at: int, phrases: tuple[str, ...]) -> int:
    """The length of the phrase of ``phrases`` at ``at`` in ``text`` (0: none)."""
    for phrase in phrases:
        end = at + len(phrase)
        if text.startswith(phrase, at) and (end == len(text) or not text[end].isalnum()):
            return len(phrase)
    return 0


def parse_hours(raw: str) -> Week:
    """The week ``raw`` describes; raises HoursError naming what it could not read."""
    text = raw.lower().replace("ё", "е")
    week: Week = {}
    days: list[int] = []
    range_from: int | None = None
    at = 0
    while at < len(text):
        if not text[at].isalnum():
            if text[at] in "-–—" and days:
                range_from = days[-1]
            at += 1
            continue
        for phrases, group in ((_EVERY_DAY, range(7)), (_WEEKDAYS, range(5)), (_WEEKEND, range(5, 7))):
            size = _phrase(text, at, phrases)
            if size:
                days.extend(group)
                at += size
                break
        else:
            size = _phrase(text, at, _CLOSED)
            if size:
                _assign(week, days, None)
                days, at = [], at + size
                continue
            size = _phrase(text, at, _ALL_DAY)
            if size:
                _assign(week, days, Opening(0, 1440))
                days, at = [], at + size
                continue
            token = _TOKEN.match(text, at)
            if token is None:  # pragma: no cover - the pattern's word branch takes any letter or digit
                raise HoursError(f"не понимаю «{raw}»")
            if token.group("time"):
                _assign(week, days, _opening(token, raw))
                days = []
            elif token.group("dash"):
                if days:
                    range_from = days[-1]
            else:
                word = token.group("word")
                day = _day(word)
                if day is None:
                    if word in _FILLERS:
                        at = token.end()
                        continue
                    raise HoursError(f"не понимаю «{word}» в «{raw}»")
                if range_from is not None:
                    days.extend(_span(range_from, day)[1:])
                    range_from = None
                else:
                    days.append(day)
            at = token.end()
    if days:
        raise HoursError(f"у дней в «{raw}» нет часов (пишите как «пн–пт 10:00–21:00»)")
    if not week:
        raise HoursError(f"в «{raw}» нет часов (пишите как «ежедневно 10:00–22:00»)")
    return week


def _span(first: int, last: int) -> list[int]:
    return [(first + i) % 7 for i in range((last - first) % 7 + 1)]


def _assign(week: Week, days: list[int], opening: Opening | None) -> None:
    for day in days or range(7):  # hours with no days before them: every day
        week[day] = opening


def _opening(token: re.Match[str], raw: str) -> Opening:
    h1, m1, h2, m2 = (int(token.group(g) or 0) for g in ("h1", "m1", "h2", "m2"))  # «10–22»: whole hours
    if h1 > 24 or h2 > 24 or m1 > 59 or m2 > 59:
        raise HoursError(f"нет такого времени в «{raw}»")
    opens, closes = h1 * 60 + m1, h2 * 60 + m2
    if opens == closes and opens != 0:
        raise HoursError(f"время открытия и закрытия совпадают в «{raw}»")
    return Opening(opens % 1440, closes if closes == 1440 else closes % 1440)
