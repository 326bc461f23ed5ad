"""Weekly report function: every Monday (and on /report in the admin chat) the chart and the summary go to
ADMIN_CHAT_ID. It carries matplotlib itself (requirements.txt), keeping the shared layer small."""

from sommelier.observability.shell import HandlerShell
from sommelier.secrets import load_secrets_into_environment
from sommelier.settings import load_settings
from sommelier.shop.report_delivery import scheduled_report
from sommelier.store.adapters import repositories_from_settings

shell = HandlerShell("sommelier-weekly-report")
logger = shell.logger


@shell
def handler(event, context):
    load_secrets_into_environment()
    return scheduled_report(event, repositories_from_settings(load_settings()).shop)
