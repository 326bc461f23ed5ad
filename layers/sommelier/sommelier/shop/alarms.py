"""The alarms reach the owner in the admin chat: a CloudWatch alarm's SNS notification, read and said in
Russian with what to do (`AlarmNotifyFunction`, subscribed to the AlarmTopic; e-mail stays optional).

CloudWatch names an alarm "<stack>-<logical id>-<suffix>" when the template gives it no name: the advice is
found by the logical id inside the name. An alarm this module does not know is still told, by its name.
"""

from __future__ import annotations

import json
import logging
from typing import Any, NamedTuple

from sommelier.settings import Settings
from sommelier.shop.admin import notify_admin

logger = logging.getLogger(__name__)


class Advice(NamedTuple):
    what: str  # what is wrong, for the owner
    todo: str  # what to do about it


ADVICE: dict[str, Advice] = {
    "DeadLetterQueueAlarm": Advice(
        "несколько сообщений покупателей не удалось обработать даже с пяти попыток",
        "загляните в журнал AgentFunction (CloudWatch Logs) или попросите разработчика разобрать очередь ошибок "
        "(docs/deploy.md, раздел 8): эти покупатели ответа не получили.",
    ),
    "AgentErrorRateAlarm": Advice(
        "бот часто ошибается при ответах",
        "проверьте ключ LLM и каталог (`sommelier doctor`); если ошибок много после обновления, откатите его.",
    ),
    "OldestTurnAgeAlarm": Advice(
        "бот отвечает с большой задержкой: сообщения ждут в очереди",
        "проверьте, не закончились ли деньги у поставщика LLM и не упирается ли бот в AgentMaxConcurrency.",
    ),
    "WebhookApi5xxAlarm": Advice(
        "Telegram не может доставить боту сообщения (ошибки 5xx)",
        "проверьте журнал WebhookFunction; пока ошибка не исправлена, покупатели не получают ответов.",
    ),
    "WebhookErrorsAlarm": Advice(
        "вебхук бота падает с ошибками",
        "проверьте журнал WebhookFunction и секреты бота (токен, секрет вебхука).",
    ),
    "ToolFailuresAlarm": Advice(
        "не удаётся прочитать каталог и историю из базы данных",
        "проверьте базу данных (Aurora) и журнал WineToolsFunction; бот отвечает хуже или не отвечает.",
    ),
    "LLMDownAlarm": Advice(
        "модель LLM не отвечает — бот подбирает вина по правилам, без неё",
        "проверьте ключ и баланс у поставщика LLM (OPENAI_API_KEY) и его страницу статуса.",
    ),
    "JobFailuresAlarm": Advice(
        "не выполнилась фоновая задача (отчёт, загрузка каталога или чистка старых сообщений)",
        "посмотрите журнал этой функции; загрузку каталога можно повторить, положив файл снова.",
    ),
    "WebhookUnsetAlarm": Advice(
        "Telegram больше не присылает боту сообщения: вебхук не зарегистрирован",
        "зарегистрируйте его снова: `sommelier webhook set` или повторное развёртывание.",
    ),
    "LLMBudgetAlarm": Advice(
        "при сегодняшних расходах месячный бюджет LLM будет превышен",
        "если это обычная нагрузка, поднимите MonthlyLLMBudgetUSD; иначе ничего делать не нужно — сверх бюджета "
        "бот сам отвечает без LLM (лимиты расходов, RELIABILITY.md).",
    ),
}
STATES = {"ALARM": "⚠️ Тревога", "OK": "✅ Снова в порядке", "INSUFFICIENT_DATA": "❔ Нет данных"}
UNKNOWN = Advice("сработал сигнал мониторинга", "посмотрите его в консоли CloudWatch.")


def advice_for(alarm_name: str) -> tuple[str, Advice]:
    """The alarm's logical id (its known name in the template) and the advice, found inside CloudWatch's name."""
    for logical_id, advice in ADVICE.items():
        if logical_id in alarm_name:
            return logical_id, advice
    return alarm_name, UNKNOWN


def alarm_text(notification: dict[str, Any]) -> str:
    """What the admin chat is told about one CloudWatch state change."""
    name = str(notification.get("AlarmName") or "без имени")
    state = str(notification.get("NewStateValue") or "")
    logical_id, advice = advice_for(name)
    headline = STATES.get(state, f"Сигнал {state or 'без состояния'}")
    if state == "OK":
        return f"{headline}: {advice.what} — больше не так ({logical_id})."
    when = str(notification.get("StateChangeTime") or "")[:16].replace("T", " ")
    return (
        f"{headline}: {advice.what}.\n"
        f"Что сделать: {advice.todo}\n"
        f"Сигнал {logical_id}" + (f", {when} UTC" if when else "") + "."
    )


def notifications(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The CloudWatch notifications in an SNS event (a message that is not one is logged and skipped)."""
    found = []
    for record in event.get("Records") or [] if isinstance(event, dict) else []:
        message = ((record or {}).get("Sns") or {}).get("Message") if isinstance(record, dict) else None
        try:
            parsed = json.loads(message) if isinstance(message, str) else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "AlarmName" in parsed:
            found.append(parsed)
        else:
            logger.warning("an SNS message that is not a CloudWatch alarm was skipped")
    return found


def tell_the_owner(settings: Settings, event: dict[str, Any]) -> dict[str, Any]:
    """The alarm function's job: each notification of the event to the admin chat."""
    told = 0
    found = notifications(event)
    for notification in found:
        if notify_admin(settings, alarm_text(notification)):
            told += 1
    return {"alarms": len(found), "told": told}
