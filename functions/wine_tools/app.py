"""Tool function: the only code with database credentials (DESIGN.md §1, §5)."""

import logging

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging import utils as logging_utils
from sommelier.logging_redaction import install_redaction
from sommelier.tools.handler import handle

logger = Logger(service="sommelier-tools")
logging_utils.copy_config_to_registered_loggers(
    source_logger=logger,
    include={name for name in logging.root.manager.loggerDict if name.startswith("sommelier.")},
)
install_redaction(logger)  # database passwords never reach a log line


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    tool = event.get("tool") if isinstance(event, dict) else None
    logger.append_keys(tool=tool if isinstance(tool, str) else None)
    return handle(event)
