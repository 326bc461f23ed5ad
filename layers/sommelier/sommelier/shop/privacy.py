"""/privacy and /forget: what the bot keeps about a customer, and deleting all of it on request."""

from __future__ import annotations

import logging
from typing import NamedTuple

from sommelier.settings import DEFAULT_RETENTION_DAYS, SettingError, ShopSettings
from sommelier.telegram.callback_data import CallbackData


def stated_retention_days(shop: ShopSettings) -> int:
    """The period /privacy states: the configured one, or the default when the setting is unreadable (logged)."""
    try:
        return shop.retention_days()
    except SettingError as exc:
        logging.getLogger(__name__).warning("%s; /privacy states the default", exc)
        return DEFAULT_RETENTION_DAYS


def privacy_text(days: int) -> str:
    return (
        "Что я храню и сколько:\n"
        "• ваш Telegram id, имя и имя пользователя, язык — чтобы обращаться к вам и помнить ваши вкусы;\n"
        "• ваш ответ на вопрос о возрасте;\n"
        f"• ваши сообщения и мои ответы — {days} дней, потом они удаляются автоматически;\n"
        "• ваши оценки 👍 / 👎 — пока вы их не удалите;\n"
        "• ваш профиль вкуса (что понравилось и что нет, любимые стили и сорта, обычный бюджет) — "
        "чтобы подбирать вина под вас; он хранится, пока вы его не удалите, посмотреть его — /profile;\n"
        "• служебные записи о доставке сообщений — сутки.\n\n"
        "В еженедельный отчёт магазину попадают общие числа (сколько было вопросов, какие вина "
        "нравятся) и, без имени и id, запросы, на которые в каталоге не нашлось вина.\n\n"
        "Команда /forget удалит всё, что я о вас помню."
    )


CONFIRM_QUESTION = (
    "Удалить всё, что я о вас помню: историю разговора, профиль и профиль вкуса, оценки и ответ о возрасте? "
    "Отменить это будет нельзя."
)
CONFIRM_YES = "Да, удалить"
CONFIRM_NO = "Отмена"
FORGOTTEN = "Готово: я удалил всё, что помнил о вас. Если захотите вернуться — просто напишите мне."
KEPT = "Хорошо, ничего не удаляю."
FAILED = "Не получилось удалить данные прямо сейчас — попробуйте, пожалуйста, чуть позже."
NOT_YOURS = "Эта кнопка для другого собеседника 🙂"


class ForgetAnswer(NamedTuple):
    """«Да, удалить» / «Отмена» for one user: callback data forget:<1|0>:<user_id>."""

    confirmed: bool
    user_id: int


ANSWER = CallbackData("forget", ForgetAnswer)


def confirm_keyboard(user_id: int) -> dict[str, object]:
    return {
        "inline_keyboard": [
            [
                {"text": CONFIRM_YES, "callback_data": ANSWER.pack(ForgetAnswer(True, user_id))},
                {"text": CONFIRM_NO, "callback_data": ANSWER.pack(ForgetAnswer(False, user_id))},
            ]
        ]
    }
