"""Agent function: SQS FIFO consumer that runs one conversation turn per Telegram update."""

import json
import logging

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging import utils as logging_utils
from sommelier.logging_redaction import install_redaction
from sommelier.observability import metrics
from sommelier.secrets import load_secrets_into_environment
from sommelier.telegram.consumer import handle_sqs, reset_default_bot

logger = Logger(service="sommelier-agent")
# The domain logs through stdlib loggers; give them Powertools' JSON format, level and keys.
logging_utils.copy_config_to_registered_loggers(
    source_logger=logger,
    include={name for name in logging.root.manager.loggerDict if name.startswith("sommelier.")},
)
install_redaction(logger)  # the token, the webhook secret and keys never reach a log line


def _update_ids(event) -> list:
    ids = []
    for record in (event or {}).get("Records", []):
        try:
            ids.append(json.loads(record.get("body") or "{}").get("update_id"))
        except (ValueError, AttributeError):
            ids.append(None)
    return ids


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    ids = _update_ids(event)
    logger.append_keys(update_id=ids[0] if len(ids) == 1 else ids)  # correlation id (DESIGN.md §11)
    if load_secrets_into_environment():  # a key or the token was rotated: rebuild the bot with it
        reset_default_bot()
    return handle_sqs(event, context)
