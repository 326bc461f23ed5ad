"""The bot's username at the edge: the variable, else one getMe, cached; a failure is retried a minute later."""

from __future__ import annotations

import logging

from sommelier.settings import TelegramSettings
from sommelier.telegram.updates import RETRY_AFTER_FAILURE_S, BotUsername, NoToken

UNNAMED = TelegramSettings()  # no TELEGRAM_BOT_USERNAME


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_variable_wins_and_nothing_is_asked():
    from sommelier.settings import load_settings

    named = load_settings({"TELEGRAM_BOT_USERNAME": "@Sommelier_Bot"}).telegram
    asked = []
    assert BotUsername(named, lambda: asked.append(1) or "other").get() == "Sommelier_Bot"
    assert asked == []


def test_get_me_is_asked_once_and_cached():
    asked = []
    username = BotUsername(UNNAMED, lambda: asked.append(1) or "sommelier_test_bot")
    assert [username.get() for _ in range(5)] == ["sommelier_test_bot"] * 5
    assert asked == [1]


def test_a_failure_means_loose_matching_for_a_minute_then_a_retry(caplog):
    answers = [RuntimeError("Telegram is down"), "sommelier_test_bot"]

    def lookup():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    clock = Clock()
    username = BotUsername(UNNAMED, lookup, clock=clock)
    assert username.get() is None
    clock.now += RETRY_AFTER_FAILURE_S - 1
    assert username.get() is None and len(answers) == 1, "not asked again within the minute"
    clock.now += 2
    assert username.get() == "sommelier_test_bot"
    assert any(r.levelno == logging.WARNING and "loosely" in r.getMessage() for r in caplog.records)


def test_without_a_token_there_is_no_warning(caplog):

    def no_token():
        raise NoToken("no bot token to ask getMe with; set TELEGRAM_BOT_USERNAME")

    caplog.set_level(logging.INFO)
    assert BotUsername(UNNAMED, no_token).get() is None
    assert [r.levelno for r in caplog.records if "loosely" in r.getMessage()] == [logging.INFO]
