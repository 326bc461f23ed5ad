"""Agent function: SQS FIFO consumer that runs one conversation turn per Telegram update."""

import json
from typing import Any

from sommelier.app import build_bot
from sommelier.observability.shell import HandlerShell
from sommelier.secrets import SettingsSource
from sommelier.telegram.consumer import AgentContainer


def update_ids(event: dict[str, Any] | None) -> str | None:
    """The correlation id: the update id of the batch's record (the ids, comma-separated, for several)."""
    ids = []
    for record in (event or {}).get("Records", []):
        try:
            ids.append(str(json.loads(record.get("body") or "{}").get("update_id")))
        except (ValueError, AttributeError):
            ids.append("?")
    return ",".join(ids) or None


source = SettingsSource()
shell = HandlerShell("sommelier-agent", source.environment, correlation=update_ids)
logger = shell.logger
container = AgentContainer(source.current, build=build_bot)  # this process's bot, built on the first update


@shell
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return container.handle_sqs(event, context)
