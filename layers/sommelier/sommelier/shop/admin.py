"""The shop's admin chat (ADMIN_CHAT_ID): /stats and /report answer there and nowhere else."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sommelier.settings import SettingError, Settings, ShopSettings

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from sommelier.domain.pricing import LLMPrice
    from sommelier.domain.shop import AdminStats
    from sommelier.telegram.updates import Routed

# The chats an admin command may be answered in: the admin chat is the staff's private chat or group; a
# channel, a channel's direct messages or a Business chat is never it, whatever its id (in a Business chat
# the chat's id is the customer's own, so the admin writing to someone else's Business account would match).
ADMIN_CHAT_TYPES = frozenset({"private", "group", "supergroup"})


def is_admin_chat(shop: ShopSettings, chat_id: int | None) -> bool:
    """False for every chat when ADMIN_CHAT_ID is unset or unreadable (logged; `sommelier doctor` names it)."""
    try:
        admin = shop.admin_chat_id()
    except SettingError as exc:
        logger.warning("%s: admin commands are off", exc)
        return False
    return admin is not None and chat_id == admin


def is_admin_turn(shop: ShopSettings, routed: Routed) -> bool:
    """The update came in the admin chat itself: its id, and neither a Business chat nor a channel's."""
    if routed.business_connection_id is not None or routed.direct_messages_topic_id is not None:
        return False
    return routed.chat_type in ADMIN_CHAT_TYPES and is_admin_chat(shop, routed.chat_id)


def limits_text(hits: Mapping[str, int]) -> str:
    """How often each spending limit stopped the LLM (telegram/limits.py), for /stats and the weekly report."""
    from sommelier.telegram.limits import LIMIT_NAMES

    if not hits:
        return "• лимиты расходов не срабатывали\n"
    listed = "; ".join(f"{LIMIT_NAMES[name]} — {count}" for name, count in hits.items() if name in LIMIT_NAMES)
    return f"• лимиты расходов сработали: {listed}\n"


def stats_text(stats: AdminStats, price: LLMPrice | None = None, limit_hits: Mapping[str, int] | None = None) -> str:
    """The /stats summary; with a price, what the LLM cost in 7 days and per question (cached tokens are
    not stored per turn, so this is the upper bound: every prompt token at the full price)."""
    cost = ""
    if price is not None and (stats.prompt_tokens_7d or stats.completion_tokens_7d):
        week = price.cost(stats.prompt_tokens_7d, stats.completion_tokens_7d)
        per_turn = f", ≈ ${week / stats.turns_7d:.4f} за вопрос" if stats.turns_7d else ""
        cost = f"• LLM за 7 дней: ≈ ${week:.2f}{per_turn}\n"
    return (
        "Сводка сомелье:\n"
        f"• покупателей в базе: {stats.customers}\n"
        f"• вопросов сегодня: {stats.turns_today}, за 7 дней: {stats.turns_7d}\n"
        f"• оценки за 7 дней: 👍 {stats.likes_7d} / 👎 {stats.dislikes_7d}\n"
        f"• вин в каталоге: {stats.wines}\n"
        f"{cost}"
        f"{limits_text(limit_hits) if limit_hits is not None else ''}\n"
        "Полный отчёт с графиком: /report"
    )


def notify_admin(settings: Settings, text: str) -> bool:
    """Send a plain-text message to the admin chat; False (logged) when unset or Telegram refuses."""
    from sommelier.telegram.client import TelegramClient, TelegramError
    from sommelier.telegram.render import split_text

    try:
        chat = settings.shop.admin_chat_id()
        if chat is None:
            return False
        with TelegramClient.from_settings(settings.telegram) as client:
            for chunk in split_text(text):
                client.send_message(chat, chunk)
    except (TelegramError, ValueError) as exc:  # MissingSetting (no token) is a ValueError too
        logger.warning("the admin chat was not told: %s", exc)
        return False
    return True
