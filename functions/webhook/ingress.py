"""Webhook function: HTTP API → check, dedupe, enqueue (DESIGN.md §1). Imports no LLM code."""

from sommelier.logging_redaction import install_redaction
from sommelier.secrets import load_secrets_into_environment
from sommelier.telegram.ingress import handle_http, logger

install_redaction(logger)  # the token, the webhook secret and keys never reach a log line


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    load_secrets_into_environment()
    return handle_http(event, context)
