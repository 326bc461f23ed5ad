"""The age gate: a customer says they are 18 or older before the bot shows any wine.

The answer is stored per Telegram user (table age_answers) and a positive one is cached in the
process for a few minutes, so a confirmed customer costs one lookup per warm instance, not per turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from sommelier.domain.errors import PortError
from sommelier.repositories.ports import ShopRepository
from sommelier.telegram.callback_data import CallbackData, CallbackDataError

logger = logging.getLogger(__name__)

QUESTION = "Прежде чем говорить о вине, уточню: вам уже исполнилось 18 лет?"
YES, NO = "Да", "Нет"
THANKS = "Спасибо!"
REFUSAL = (
    "Спасибо за честный ответ! Рассказывать о вине и советовать его я могу только тем, кому уже есть 18. "
    "Если вы ошиблись кнопкой — нажмите «Да» под вопросом выше."
)
NOT_YOURS = "Этот вопрос задан другому собеседнику 🙂"
ANSWER_FIRST = "Сначала подтвердите, что вам уже есть 18: напишите мне любое сообщение"
CACHE_SECONDS = 600


class AgeAnswer(NamedTuple):
    """«Да» / «Нет» for one user: callback data age:<1|0>:<user_id>[:<start payload>]."""

    adult: bool
    user_id: int
    start_payload: str = ""  # a deep link's /start payload to open after «Да» ("" when none)


ANSWER = CallbackData("age", AgeAnswer)


def question_keyboard(user_id: int, start_payload: str = "") -> dict[str, object]:
    """«Да» / «Нет» for this user; the deep-link payload rides along so the wine opens after «Да»."""
    try:
        yes = ANSWER.pack(AgeAnswer(True, user_id, start_payload))
    except CallbackDataError:  # it would not fit in the button's 64 bytes: drop the payload, not the button
        yes = ANSWER.pack(AgeAnswer(True, user_id))
    no = ANSWER.pack(AgeAnswer(False, user_id))
    return {"inline_keyboard": [[{"text": YES, "callback_data": yes}, {"text": NO, "callback_data": no}]]}


class AgeGate:
    """The gate of one bot (its shop port and its cache): the process's Runtime holds it, so one bot's
    answers never leak into another bot's database."""

    def __init__(self, shop: ShopRepository, clock: Callable[[], float] = time.monotonic):
        self.shop = shop
        self._clock = clock
        self._confirmed: dict[int, float] = {}
        self._lock = threading.Lock()

    def is_adult(self, user_id: int) -> bool:
        now = self._clock()
        with self._lock:
            seen = self._confirmed.get(user_id)
        if seen is not None and now - seen < CACHE_SECONDS:
            return True
        try:
            is_adult = self.shop.get_age_answer(user_id)
        except PortError as exc:
            # Unknown is not "yes": the customer is asked again rather than shown wine unchecked.
            logger.warning("age answer not read: %s", exc)
            return False
        if is_adult is True:
            with self._lock:
                self._confirmed[user_id] = now
            return True
        return False

    def record(self, user_id: int, adult: bool) -> bool:
        try:
            self.shop.save_age_answer(user_id, adult)
        except PortError as exc:
            logger.warning("age answer not saved: %s", exc)
            return False
        self.forget(user_id)
        if adult:
            with self._lock:
                self._confirmed[user_id] = self._clock()
        return True

    def forget(self, user_id: int) -> None:
        with self._lock:
            self._confirmed.pop(user_id, None)
