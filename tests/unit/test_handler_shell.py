"""The one handler shell: a redacting Powertools formatter, the correlation id, the domain's loggers, tracing."""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path

import pytest
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from sommelier.observability import telemetry as tracing
from sommelier.observability.shell import HandlerShell, RedactingFormatter, shell_logger
from sommelier.settings import Settings, load_settings

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
    shell = HandlerShell("sommelier-shell-test", Settings(), correlation=lambda event: event["update_id"], trace=False)

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
    @HandlerShell("sommelier-shell-test", Settings(), correlation=lambda event: event["update_id"], trace=False)
    def handler(event, context):
        return event

    assert handler("not a dict", _Context()) == "not a dict"


def test_tracing_only_with_x_ray_in_lambda():
    def tracing_active(**environ: str) -> bool:
        return load_settings(environ).tracing_active

    assert not tracing_active()
    daemon = {"AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000"}
    assert not tracing_active(**daemon), "outside Lambda (no task root) there is no daemon to talk to"
    assert tracing_active(**daemon, LAMBDA_TASK_ROOT="/var/task")
    assert not tracing_active(**daemon, LAMBDA_TASK_ROOT="/var/task", AWS_SAM_LOCAL="true")
    assert not tracing_active(**daemon, LAMBDA_TASK_ROOT="/var/task", POWERTOOLS_TRACE_DISABLED="true")
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
    assert owners == ["layers/sommelier/sommelier/observability/redaction.py"]


_TRACED_FUNCTION = r"""
import json, sys
from sommelier.observability.shell import HandlerShell
from sommelier.observability.telemetry import subsegment
from sommelier.settings import load_settings

class Context:
    function_name = "sommelier-Trace-test"
    function_version = "$LATEST"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-Trace-test"
    aws_request_id = "req-trace-1"
    log_group_name = "/aws/lambda/sommelier-Trace-test"
    log_stream_name = "stream"
    def get_remaining_time_in_millis(self):
        return 10_000

shell = HandlerShell("sommelier-trace-test", load_settings(), correlation=lambda event: event["update_id"])
assert shell.tracer is not None

@shell
def handler(event, context):
    with subsegment("llm", model="test-model"):
        with subsegment("tool", tool="search_wines"):
            pass
    with subsegment("telegram", method="sendMessage"):
        pass
    return "ok"

print(json.dumps(handler({"update_id": 77}, Context())))
"""


def test_in_lambda_with_x_ray_the_calls_are_subsegments(tmp_path):
    """A real Powertools Tracer in a child process (it patches libraries process-wide), sending to a
    UDP socket that stands in for the X-Ray daemon: the LLM, tool and Telegram calls arrive as subsegments."""
    import os
    import socket
    import subprocess
    import sys

    daemon = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    daemon.bind(("127.0.0.1", 0))
    daemon.settimeout(10)
    port = daemon.getsockname()[1]
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "sommelier"), str(ROOT)]),
        "LAMBDA_TASK_ROOT": str(tmp_path),
        "AWS_LAMBDA_FUNCTION_NAME": "sommelier-Trace-test",
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{port}",
        "_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "AWS_DEFAULT_REGION": "eu-central-1",
    }
    for name in ("AWS_SAM_LOCAL", "POWERTOOLS_TRACE_DISABLED"):
        environment.pop(name, None)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _TRACED_FUNCTION], env=environment, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == '"ok"'
        documents = []
        while True:
            try:
                datagram = daemon.recv(65_536).decode("utf-8")
            except TimeoutError:
                break
            documents.append(json.loads(datagram.split("\n", 1)[1]))  # a header line, then the document
            names = {d.get("name") for d in documents}
            if {"llm", "tool", "telegram"} <= names:
                break
    finally:
        daemon.close()
    by_name = {d["name"]: d for d in documents}
    assert {"llm", "tool", "telegram"} <= set(by_name), sorted(by_name)
    assert by_name["llm"]["annotations"]["model"] == "test-model"
    assert by_name["telegram"]["annotations"]["method"] == "sendMessage"
    assert by_name["tool"]["parent_id"] == by_name["llm"]["id"], "the tool call nests inside the LLM round"
