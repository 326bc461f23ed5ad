"""Tool function: the only code with database credentials (DESIGN.md §1, §5)."""

from aws_lambda_powertools import Logger

from sommelier.tools.handler import handle

logger = Logger(service="sommelier-tools")


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    tool = event.get("tool") if isinstance(event, dict) else None
    logger.append_keys(tool=tool if isinstance(tool, str) else None)
    return handle(event)
