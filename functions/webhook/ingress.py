"""Webhook function: HTTP API -> Mangum -> the Starlette webhook app (check, dedupe, enqueue). No LLM code."""

from sommelier.edge.app import LambdaWebhook, create_app
from sommelier.observability.shell import HandlerShell
from sommelier.secrets import load_secrets_into_environment

webhook = LambdaWebhook(create_app())  # the container's state: duplicate filter, idempotency, bot username


# No Tracer here: aws_xray_sdk would triple the cold start; Lambda's own segment covers the ack.
# The update id becomes the correlation id once the body is parsed (Ingress.handle).
shell = HandlerShell("sommelier-webhook", trace=False)
logger = shell.logger


@shell
def handler(event, context):
    load_secrets_into_environment()
    return webhook(event, context)
