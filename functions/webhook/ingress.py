"""Webhook function: HTTP API -> Mangum -> the Starlette webhook app (check, dedupe, enqueue). No LLM code."""

from sommelier.logging_redaction import install_redaction
from sommelier.secrets import load_secrets_into_environment
from sommelier.telegram.ingress import logger
from sommelier.telegram.webhook_app import LambdaWebhook, create_app

install_redaction(logger)  # the token, the webhook secret and keys never reach a log line
webhook = LambdaWebhook(create_app())  # the container's state: duplicate filter, idempotency, bot username


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    load_secrets_into_environment()
    return webhook(event, context)
