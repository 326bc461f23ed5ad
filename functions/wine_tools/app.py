"""Tool function: the only code with database credentials (docs/architecture.md)."""

from sommelier.observability.shell import HandlerShell
from sommelier.toolfn.handler import handle


def tool_name(event) -> str | None:
    tool = event.get("tool") if isinstance(event, dict) else None
    return tool if isinstance(tool, str) else None


shell = HandlerShell("sommelier-tools", correlation=tool_name)  # database passwords never reach a log line
logger = shell.logger


@shell
def handler(event, context):
    return handle(event)
