"""Weekly report function: every Monday (and on /report in the admin chat) the chart and the summary go to
ADMIN_CHAT_ID. It carries matplotlib itself (requirements.txt), keeping the shared layer small."""

from typing import Any

from sommelier.observability.shell import HandlerShell
from sommelier.repositories.adapters import repositories_from_settings
from sommelier.secrets import SettingsSource
from sommelier.settings import SettingError
from sommelier.shop.report_delivery import scheduled_report

source = SettingsSource()
shell = HandlerShell("sommelier-weekly-report", source.environment)
logger = shell.logger


@shell
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        settings, _ = source.current()
    except SettingError as exc:
        logger.error("%s: no weekly report", exc)
        return {"sent": False, "reason": str(exc)}
    return scheduled_report(settings, event, repositories_from_settings(settings).shop)
