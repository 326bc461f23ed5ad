"""The one handler shell: a redacting Powertools formatter, the correlation id, the domain's loggers, tracing."""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path

import pytest
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from sommelier import tracing
from sommelier.handler_shell import HandlerShell, RedactingFormatter, shell_logger, tracing_active

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "7654321098:AAH-shell-test-token-0123456789abcdefXYZ"


class _Context:
    function_name = "sommelier-Shell-test"
    function_version = "$LATEST"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-Shell-test"
    aws_request_id = "req-shell-1"
    log_group_name = "/aws/lambda/sommelier-Shell-test"
    log_stream_name = "stream"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 10_000


@pytest.fixture
def lines(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    stream = io.StringIO()
    handler = shell_logger("sommelier-shell-test").registered_handler
    previous = handler.setStream(stream)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    handler.setStream(previous)


def test_the_formatter_is_a_powertools_formatter_subclass_and_handlers_are_not_patched():
    logger = shell_logger("sommelier-shell-test")
    handler = logger.registered_handler
    assert isinstance(handler.formatter, RedactingFormatter)
    assert isinstance(handler.formatter, LambdaPowertoolsFormatter)
    assert "format" not in vars(handler), "the handler's format method is the class's own"
    assert logging.getLogger("sommelier").handlers == [handler], "the domain's loggers write through it"


def test_every_line_is_masked_and_carries_the_correlation_id(lines):
    shell = HandlerShell("sommelier-shell-test", correlation=lambda event: event["update_id"], trace=False)

    @shell
    def handler(event, context):
        logging.getLogger("sommelier.somewhere").warning("calling with %s", TOKEN, extra={"token": TOKEN})
        shell.logger.info({"nested": [f"bot{TOKEN}/sendMessage"]})
        return "done"

    assert handler({"update_id": 4242}, _Context()) == "done"
    out = lines()
    assert len(out) == 2 and TOKEN not in json.dumps(out) and "***" in json.dumps(out)
    assert {line["correlation_id"] for line in out} == {"4242"}
    assert out[0]["name"] == "sommelier.somewhere" and out[0]["function_request_id"] == "req-shell-1"


def test_a_malformed_event_still_reaches_the_handler(lines):
    @HandlerShell("sommelier-shell-test", correlation=lambda event: event["update_id"], trace=False)
    def handler(event, context):
        return event

    assert handler("not a dict", _Context()) == "not a dict"


def test_tracing_only_with_x_ray_in_lambda(monkeypatch):
    for name in ("AWS_XRAY_DAEMON_ADDRESS", "LAMBDA_TASK_ROOT", "AWS_SAM_LOCAL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    assert not tracing_active()
    monkeypatch.setenv("AWS_XRAY_DAEMON_ADDRESS", "169.254.79.129:2000")
    assert not tracing_active(), "outside Lambda (no task root) there is no daemon to talk to"
    monkeypatch.setenv("LAMBDA_TASK_ROOT", "/var/task")
    assert tracing_active()
    monkeypatch.setenv("AWS_SAM_LOCAL", "true")
    assert not tracing_active()
    assert tracing.active_tracer() is None
    with tracing.subsegment("llm", model="m"):  # a no-op without a Tracer
        pass


def test_one_telegram_token_pattern_in_the_code_base():
    shapes = re.compile(r"\\d\{\d,?\d*\}:\[A-Za-z0-9_-\]")
    owners = [
        path.relative_to(ROOT).as_posix()
        for folder in ("layers/sommelier/sommelier", "functions")
        for path in (ROOT / folder).rglob("*.py")
        if shapes.search(path.read_text("utf-8"))
    ]
    assert owners == ["layers/sommelier/sommelier/logging_redaction.py"]
