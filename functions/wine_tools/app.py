"""Tool function: the only code with database credentials (docs/architecture.md)."""

from typing import Any

from sommelier.observability.shell import HandlerShell
from sommelier.secrets import SettingsSource
from sommelier.toolfn.handler import ToolFunction


def tool_name(event: Any) -> str | None:
    tool = event.get("tool") if isinstance(event, dict) else None
    return tool if isinstance(tool, str) else None


source = SettingsSource()
shell = HandlerShell("sommelier-tools", source.environment, correlation=tool_name)  # passwords never reach a log
logger = shell.logger
tools = ToolFunction(lambda: source.current()[0])  # the database pool, opened on the first call


@shell
def handler(event: Any, context: Any) -> dict[str, Any]:
    return tools(event)
