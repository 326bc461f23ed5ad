"""Weekly report function: every Monday (and on /report in the admin chat) the chart and the summary go to
ADMIN_CHAT_ID. It carries matplotlib itself (requirements.txt), keeping the shared layer small."""

import logging

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging import utils as logging_utils
from sommelier.config import load_settings
from sommelier.logging_redaction import install_redaction
from sommelier.secrets import load_secrets_into_environment
from sommelier.shop.report_delivery import scheduled_report
from sommelier.tools.client import tools_from_settings

logger = Logger(service="sommelier-weekly-report")
logging_utils.copy_config_to_registered_loggers(
    source_logger=logger,
    include={name for name in logging.root.manager.loggerDict if name.startswith("sommelier.")},
)
install_redaction(logger)


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    load_secrets_into_environment()
    return scheduled_report(event, tools_from_settings(load_settings()))
