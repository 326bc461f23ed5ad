"""Webhook function: HTTP API -> Mangum -> the Starlette webhook app (check, dedupe, enqueue). No LLM code."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sommelier.edge.app import LambdaWebhook, create_app
from sommelier.edge.ingress import Ingress, InlineSink, SqsSink, TurnSink
from sommelier.observability.shell import HandlerShell
from sommelier.secrets import SettingsSource
from sommelier.settings import Settings
from sommelier.telegram.identity import webhook_bot_username

if TYPE_CHECKING:
    from starlette.applications import Starlette

source = SettingsSource()
# No Tracer here: aws_xray_sdk would triple the cold start; Lambda's own segment covers the ack.
# The update id becomes the correlation id once the body is parsed (Ingress.handle).
shell = HandlerShell("sommelier-webhook", source.environment, trace=False)
logger = shell.logger


def inline_turns(settings: Settings) -> Callable[[dict[str, Any], int], None]:
    """No queue (a local run of this function): the turn runs here; the LLM stack loads only then."""
    from sommelier.app import build_bot

    return build_bot(settings).process


def sink(settings: Settings) -> TurnSink:
    if settings.aws.queue_url:
        return SqsSink(settings.aws.queue_url)
    return InlineSink(lambda: inline_turns(settings))


def app(settings: Settings) -> Starlette:
    return create_app(
        Ingress(
            settings, sink(settings), bot_username=webhook_bot_username(settings.telegram), correlate=shell.correlate
        )
    )


# The container's state (duplicate filter, idempotency, bot username), rebuilt when a secret changed.
webhook = LambdaWebhook(app, source.current)


@shell
def handler(event: Any, context: Any) -> dict[str, Any]:
    return webhook(event, context)
