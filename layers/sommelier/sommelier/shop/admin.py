"""The shop's admin chat (ADMIN_CHAT_ID): /stats and /report answer there and nowhere else."""

from __future__ import annotations

from typing import Any

from sommelier.config import env


def admin_chat_id() -> int | None:
    raw = env("ADMIN_CHAT_ID")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"ADMIN_CHAT_ID must be a Telegram chat id (an integer), got {raw!r}") from exc


def is_admin_chat(chat_id: int | None) -> bool:
    admin = admin_chat_id()
    return admin is not None and chat_id == admin


def stats_text(stats: dict[str, Any]) -> str:
    return (
        "Сводка сомелье:\n"
        f"• покупателей в базе: {stats['customers']}\n"
        f"• вопросов сегодня: {stats['turns_today']}, за 7 дней: {stats['turns_7d']}\n"
        f"• оценки за 7 дней: 👍 {stats['likes_7d']} / 👎 {stats['dislikes_7d']}\n"
        f"• вин в каталоге: {stats['wines']}\n\n"
        "Полный отчёт с графиком: /report"
    )
