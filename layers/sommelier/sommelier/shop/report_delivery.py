"""Sending the weekly report to the admin chat: the chart as a photo, then the text.

`/report` asks for it now: in AWS it starts the report function asynchronously (it carries matplotlib;
the agent's layer does not), locally it is made and sent in-process.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

from sommelier.repositories.ports import ShopRepository
from sommelier.settings import SettingError, Settings
from sommelier.shop.report import ReportError, WeeklyReport, fetch_report, llm_prices, report_chart, report_text
from sommelier.telegram.client import TelegramClient
from sommelier.telegram.limits import SpendingLimits, limits_from_settings
from sommelier.telegram.render import split_text

logger = logging.getLogger(__name__)

WEEK = timedelta(days=7)
STARTED = "Собираю отчёт за 7 дней — пришлю сюда через минуту."
SENT = "Отчёт за 7 дней — выше."
FAILED = "Не получилось собрать отчёт: {reason}"


def send_report(
    settings: Settings,
    shop: ShopRepository,
    client: TelegramClient,
    chat_id: int,
    since: timedelta = WEEK,
    limits: SpendingLimits | None = None,
) -> WeeklyReport:
    report = fetch_report(shop, since, llm_prices(settings.llm))
    try:  # how often each spending limit stopped the LLM (the agent's counters: DynamoDB, or this process's)
        report.limit_hits = (limits or limits_from_settings(settings)).hits(max(since.days, 1))
    except Exception as exc:
        logger.warning("limit figures not read: %s", exc)
    client.send_photo(chat_id, report_chart(report), filename="report.png")
    for chunk in split_text(report_text(report)):
        client.send_message(chat_id, chunk)
    return report


def request_report(settings: Settings, chat_id: int, shop: ShopRepository, limits: SpendingLimits | None = None) -> str:
    """Start the report for this chat; the answer is what to tell the admin right now."""
    function = settings.aws.report_function_name
    try:
        if function:
            import boto3

            boto3.client("lambda").invoke(
                FunctionName=function, InvocationType="Event", Payload=json.dumps({"chat_id": chat_id}).encode()
            )
            return STARTED
        with TelegramClient.from_settings(settings.telegram) as client:
            send_report(settings, shop, client, chat_id, limits=limits)
        return SENT
    except Exception as exc:  # the admin gets the reason in the chat, never a stack trace
        logger.warning("report not sent: %s", exc)
        return FAILED.format(reason=str(exc)[:300] or type(exc).__name__)


def scheduled_report(settings: Settings, event: dict[str, Any], shop: ShopRepository) -> dict[str, Any]:
    """The report function's job: every Monday (an empty event) or on /report ({"chat_id": the admin chat})."""
    try:
        chat = settings.shop.admin_chat_id()
    except SettingError as exc:
        logger.error("%s: no weekly report", exc)
        return {"sent": False, "reason": str(exc)}
    if chat is None:
        logger.info("ADMIN_CHAT_ID is not set: no weekly report")
        return {"sent": False, "reason": "ADMIN_CHAT_ID is not set"}
    asked = event.get("chat_id") if isinstance(event, dict) else None
    if asked is not None and asked != chat:
        logger.warning("a report was asked for chat %s, which is not the admin chat", asked)
        return {"sent": False, "reason": "only the admin chat gets the report"}
    try:
        with TelegramClient.from_settings(settings.telegram) as client:
            report = send_report(settings, shop, client, chat)
    except ReportError as exc:  # the figures could not be read, or LLM_PRICE_PER_MTOK is unreadable
        logger.error("weekly report not sent: %s", exc)
        return {"sent": False, "reason": str(exc)}
    return {"sent": True, "turns": report.turns, "customers": report.customers}
