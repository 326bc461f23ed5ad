"""Agent function: SQS FIFO consumer that runs one conversation turn per Telegram update."""

import json

from sommelier.observability.shell import HandlerShell
from sommelier.secrets import load_secrets_into_environment
from sommelier.telegram.consumer import AgentContainer


def update_ids(event) -> str | None:
    """The correlation id: the update id of the batch's record (the ids, comma-separated, for several)."""
    ids = []
    for record in (event or {}).get("Records", []):
        try:
            ids.append(str(json.loads(record.get("body") or "{}").get("update_id")))
        except (ValueError, AttributeError):
            ids.append("?")
    return ",".join(ids) or None


shell = HandlerShell("sommelier-agent", correlation=update_ids)
logger = shell.logger
container = AgentContainer()  # this process's bot, built on the first update


@shell
def handler(event, context):
    if load_secrets_into_environment():  # a key or the token was rotated: rebuild the bot with it
        container.reset()
    return container.handle_sqs(event, context)
