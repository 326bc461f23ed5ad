"""Scheduled webhook check: getWebhookInfo against the stack's URL, as the WebhookRegistered metric
(sommelier.deploy.webhook_check; the WebhookUnsetAlarm watches it)."""

from typing import Any

from sommelier.deploy.webhook_check import check_webhook
from sommelier.observability.shell import HandlerShell
from sommelier.secrets import SettingsSource
from sommelier.settings import SettingError

source = SettingsSource()
shell = HandlerShell("sommelier-webhook-check", source.environment)
logger = shell.logger


@shell
def handler(event: Any, context: Any) -> dict[str, Any]:
    try:
        settings, _ = source.current()
    except SettingError as exc:
        logger.error("%s: webhook not checked", exc)
        return {"registered": False, "reason": str(exc)}
    state = check_webhook(settings)
    (logger.info if state["registered"] else logger.warning)("Webhook check", extra=state)
    return state
