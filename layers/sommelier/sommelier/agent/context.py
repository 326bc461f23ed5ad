"""What the model should know about "now": date, season, time of day, upcoming Russian holidays."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple
from zoneinfo import ZoneInfo

MOSCOW = ZoneInfo("Europe/Moscow")
HOLIDAY_HORIZON_DAYS = 14

_MONTHS = (
    "января",
    "февраля",
    "марта",
    "апреля",
    "мая",
    "июня",
    "июля",
    "августа",
    "сентября",
    "октября",
    "ноября",
    "декабря",
)
_WEEKDAYS = ("понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье")

# (month, day, name): fixed-date holidays and occasions people buy wine for.
_FIXED_HOLIDAYS = (
    (1, 1, "Новый год"),
    (1, 7, "Рождество Христово"),
    (1, 14, "Старый Новый год"),
    (2, 14, "День святого Валентина"),
    (2, 23, "День защитника Отечества"),
    (3, 8, "Международный женский день"),
    (5, 1, "Праздник Весны и Труда"),
    (5, 9, "День Победы"),
    (6, 12, "День России"),
    (7, 8, "День семьи, любви и верности"),
    (9, 1, "День знаний"),
    (10, 5, "День учителя"),
    (11, 4, "День народного единства"),
    (12, 31, "Новогодняя ночь"),
)


def orthodox_easter(year: int) -> dt.date:
    """Orthodox Easter (Meeus' Julian algorithm, converted to the Gregorian calendar)."""
    a, b, c = year % 4, year % 7, year % 19
    d = (19 * c + 15) % 30
    e = (2 * a + 4 * b - d + 34) % 7
    month, day = divmod(d + e + 114, 31)
    julian = dt.date(year, month, day + 1)
    return julian + dt.timedelta(days=13)  # valid for 1900–2099


def _mothers_day(year: int) -> dt.date:
    """Russia: the last Sunday of November."""
    last = dt.date(year, 11, 30)
    return last - dt.timedelta(days=(last.weekday() - 6) % 7)


def holidays_in(year: int) -> list[tuple[dt.date, str]]:
    days = [(dt.date(year, m, d), name) for m, d, name in _FIXED_HOLIDAYS]
    easter = orthodox_easter(year)
    days += [
        (easter, "Пасха"),
        (easter - dt.timedelta(days=49), "Масленица (последний день)"),
        (_mothers_day(year), "День матери"),
    ]
    return sorted(days)


def upcoming_holidays(today: dt.date, horizon_days: int = HOLIDAY_HORIZON_DAYS) -> list[tuple[dt.date, str]]:
    end = today + dt.timedelta(days=horizon_days)
    found = [(day, name) for year in (today.year, today.year + 1) for day, name in holidays_in(year)]
    return [(day, name) for day, name in found if today <= day <= end]


def season(day: dt.date) -> str:
    return {12: "зима", 1: "зима", 2: "зима", 3: "весна", 4: "весна", 5: "весна", 6: "лето", 7: "лето", 8: "лето"}.get(
        day.month, "осень"
    )


def time_of_day(moment: dt.datetime) -> str:
    hour = moment.hour
    if 5 <= hour < 12:
        return "утро"
    if 12 <= hour < 17:
        return "день"
    if 17 <= hour < 23:
        return "вечер"
    return "ночь"


def russian_date(day: dt.date) -> str:
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}, {_WEEKDAYS[day.weekday()]}"


class MomentContext(NamedTuple):
    date: str
    season: str
    time_of_day: str
    holidays: list[str]

    def as_text(self) -> str:
        lines = [f"- Сегодня: {self.date}; сезон: {self.season}; время суток: {self.time_of_day} (Москва)"]
        if self.holidays:
            lines.append("- Ближайшие праздники: " + "; ".join(self.holidays))
        return "\n".join(lines)


def moment_context(now: dt.datetime | None = None) -> MomentContext:
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(MOSCOW)
    today = moment.date()
    holidays = [
        f"{name} ({'сегодня' if day == today else f'{day.day} {_MONTHS[day.month - 1]}'})"
        for day, name in upcoming_holidays(today)
    ]
    return MomentContext(russian_date(today), season(today), time_of_day(moment), holidays)
