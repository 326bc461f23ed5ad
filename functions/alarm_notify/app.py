"""Alarm function: every CloudWatch alarm the AlarmTopic carries goes to ADMIN_CHAT_ID in Russian, with what
to do (sommelier.shop.alarms). The e-mail subscription stays optional."""

from typing import Any

from sommelier.observability.shell import HandlerShell
from sommelier.secrets import SettingsSource
from sommelier.settings import SettingError
from sommelier.shop.alarms import tell_the_owner

source = SettingsSource()
shell = HandlerShell("sommelier-alarm-notify", source.environment)
logger = shell.logger


@shell
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        settings, _ = source.current()
    except SettingError as exc:
        logger.error("%s: the alarm is not told", exc)
        return {"alarms": 0, "told": 0, "reason": str(exc)}
    return tell_the_owner(settings, event)
