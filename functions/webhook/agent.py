"""Agent function: SQS FIFO consumer that runs one conversation turn per Telegram update."""

from aws_lambda_powertools import Logger

from sommelier.observability import metrics
from sommelier.secrets import load_secrets_into_environment
from sommelier.telegram.consumer import handle_sqs

logger = Logger(service="sommelier-agent")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    load_secrets_into_environment()
    return handle_sqs(event, context)
