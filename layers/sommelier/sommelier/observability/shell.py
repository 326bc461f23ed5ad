"""One shell for every Lambda handler (webhook, agent, tools, migrate, set_webhook).

`HandlerShell(service, settings, correlation=...)` wraps a handler with:

* a Powertools Logger (JSON, Lambda context keys, the correlation id: the update id, the tool,
  the CloudFormation request) whose formatter is `RedactingFormatter`, a Powertools formatter
  subclass that masks secrets in every finished line; the domain's stdlib loggers (`sommelier.*`)
  get the same handler through Powertools' copy_config_to_registered_loggers, and a log-record
  factory masks records that go anywhere else;
* Metrics (EMF, flushed after each invocation; the cold start counted);
* a Tracer when X-Ray is really there (`Settings.tracing_active`: in Lambda with active tracing),
  else nothing: building one imports aws_xray_sdk (~0.3 s). `sommelier.observability.telemetry.subsegment(name)`
  marks the LLM, tool and Telegram calls and is a no-op without it (locally, in tests, the webhook).

`shell.correlate(value)` lets the handler name the correlation id once it knows it (the webhook learns
the update id only after parsing the body).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

from sommelier.observability import telemetry as turn_metrics
from sommelier.observability.redaction import RedactingFilter, install_record_redaction, redact
from sommelier.observability.telemetry import active_tracer, install_tracer
from sommelier.settings import Settings

DOMAIN_LOGGER = "sommelier"


class RedactingFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON log line, with every known secret and credential-shaped value masked."""

    def format(self, record: logging.LogRecord) -> str:  # noqa: A003 - logging.Formatter's API
        return redact(super().format(record))


def _build_tracer(service: str, settings: Settings) -> Any:
    if active_tracer() is None and settings.tracing_active:
        from aws_lambda_powertools import Tracer

        install_tracer(Tracer(service=service))
    return active_tracer()


def shell_logger(service: str) -> Logger:
    """The service's Powertools Logger with the redacting formatter; the domain's loggers write through it."""
    install_record_redaction()
    logger = Logger(service=service, logger_formatter=RedactingFormatter())
    handler = logger.registered_handler
    if not any(isinstance(f, RedactingFilter) for f in handler.filters):
        handler.addFilter(RedactingFilter())
    logging.getLogger(DOMAIN_LOGGER)  # registered, so that its children propagate to the copied handler
    copy_config_to_registered_loggers(source_logger=logger, include={DOMAIN_LOGGER})
    return logger


class HandlerShell:
    def __init__(
        self,
        service: str,
        settings: Settings,
        *,
        correlation: Callable[[Any], Any] | None = None,
        trace: bool = True,
        metrics: bool = True,
    ):
        self.service = service
        self.logger = shell_logger(service)
        self.correlation = correlation
        self.tracer = _build_tracer(service, settings) if trace else None
        self.metrics = metrics
        if metrics:
            turn_metrics.configure(settings.observability.metrics_namespace)

    def correlate(self, correlation_id: Any) -> None:
        """Name this invocation's correlation id (logged on every line from now on)."""
        if correlation_id is not None:
            self.logger.set_correlation_id(str(correlation_id))

    def __call__(self, handler: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        logger = self.logger

        @functools.wraps(handler)
        def shelled(event: Any, context: Any) -> Any:
            logger.append_keys(name="%(name)s")  # which logger wrote the line (clear_state dropped it)
            if self.correlation is not None:
                try:
                    self.correlate(self.correlation(event))
                except Exception:  # a malformed event still reaches the handler, which answers it
                    logger.debug("no correlation id in this event")
            return handler(event, context)

        wrapped: Callable[[Any, Any], Any] = shelled
        if self.tracer is not None:
            wrapped = self.tracer.capture_lambda_handler(wrapped)
        if self.metrics:
            wrapped = turn_metrics.metrics.log_metrics(wrapped, capture_cold_start_metric=True)
        return logger.inject_lambda_context(wrapped, clear_state=True)


def custom_resource_logger(service: str, event: dict[str, Any] | None = None) -> Logger:
    """For the custom resources, which build their logging inside the guarded work (see custom_resource)."""
    logger = shell_logger(service)
    if isinstance(event, dict):
        logger.set_correlation_id(str(event.get("RequestId")))
        logger.append_keys(request_type=event.get("RequestType"), logical_resource_id=event.get("LogicalResourceId"))
    return logger
