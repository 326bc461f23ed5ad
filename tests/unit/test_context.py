import datetime as dt

from sommelier.agent.context import moment_context, orthodox_easter, season, time_of_day, upcoming_holidays


def test_orthodox_easter_known_dates():
    assert orthodox_easter(2024) == dt.date(2024, 5, 5)
    assert orthodox_easter(2025) == dt.date(2025, 4, 20)
    assert orthodox_easter(2026) == dt.date(2026, 4, 12)


def test_upcoming_holidays_cross_the_new_year():
    names = [name for _, name in upcoming_holidays(dt.date(2026, 12, 25))]
    assert "Новогодняя ночь" in names and "Новый год" in names and "Рождество Христово" in names


def test_mothers_day_is_last_sunday_of_november():
    days = dict((name, day) for day, name in upcoming_holidays(dt.date(2026, 11, 20)))
    assert days["День матери"] == dt.date(2026, 11, 29)


def test_season_and_time_of_day():
    assert season(dt.date(2026, 1, 5)) == "зима" and season(dt.date(2026, 7, 5)) == "лето"
    assert time_of_day(dt.datetime(2026, 1, 1, 19)) == "вечер" and time_of_day(dt.datetime(2026, 1, 1, 3)) == "ночь"


def test_moment_context_in_moscow_time():
    moment = moment_context(dt.datetime(2026, 3, 7, 22, 30, tzinfo=dt.UTC))  # 01:30 on 8 March in Moscow
    assert moment.date.startswith("8 марта 2026") and moment.time_of_day == "ночь"
    assert any("женский" in h and "сегодня" in h for h in moment.holidays)
