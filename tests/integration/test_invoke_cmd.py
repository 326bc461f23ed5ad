"""`sommelier invoke FUNCTION EVENT.json` and the template reader behind it (sommelier_dev.devtools.template)."""

from __future__ import annotations

import json
import logging
import os
import sys
import textwrap
from pathlib import Path

import cfnlint.decode  # noqa: F401 - a dev dependency: missing, the suite fails (never skips)
import pytest
from sommelier_dev.cli.main import main
from sommelier_dev.devtools.template import (  # noqa: E402
    FunctionSpec,
    UnknownFunction,
    find_function,
    functions,
    http_routes,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
EVENTS = ROOT / "events"


@pytest.fixture(autouse=True)
def _quiet_metrics(monkeypatch):
    # main() sets this with setdefault; through monkeypatch it is undone after each test.
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")


def _invoke(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["invoke", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ------------------------------------------------------------------------ the real tool -----


@pytest.fixture
def tool_database(catalog_db, monkeypatch):

    monkeypatch.setenv("DATABASE_URL", catalog_db.conninfo)
    yield catalog_db


def test_invoke_the_tool_function_on_the_search_sample(tool_database, capsys):
    before = dict(os.environ)

    code, out, err = _invoke(capsys, "WineToolsFunction", str(EVENTS / "tool_search_wines.json"))

    assert code == 0, err
    result = json.loads(out)  # stdout holds the result only; logs went to stderr
    assert "error" not in result, result
    assert result["found"] == len(result["wines"]) > 0
    for wine in result["wines"]:  # the sample asks for dry red wines up to 2000 ₽ for a steak
        assert (wine["wine_type"], wine["sweetness"]) == ("red", "dry"), wine
        assert float(wine["price_rub"]) <= 2000, wine
    assert "REPORT RequestId:" in err
    assert dict(os.environ) == before  # the function's environment is gone again
    assert not [name for name in sys.modules if name.startswith("sommelier_invoke_")]


def test_shorthand_and_stdin(tool_database, capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"tool": "get_list", "arguments": {"limit": 3}})))

    code, out, err = _invoke(capsys, "tools", "-")

    assert code == 0, err
    assert len(json.loads(out)["wines"]) == 3


# ------------------------------------------------------------------------ bad input ---------


def test_unknown_function_exits_2(capsys):
    code, out, err = _invoke(capsys, "NoSuchFunction", str(EVENTS / "tool_get_wines.json"))

    assert code == 2
    assert out == ""
    assert "NoSuchFunction" in err and "WineToolsFunction" in err  # lists the known ones


def test_unreadable_or_invalid_event_exits_2(capsys, tmp_path):
    code, out, err = _invoke(capsys, "WineToolsFunction", str(tmp_path / "missing.json"))
    assert code == 2 and out == ""

    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    code, out, err = _invoke(capsys, "WineToolsFunction", str(broken))
    assert code == 2 and out == "" and "not valid JSON" in err


def test_missing_env_vars_file_exits_2(capsys, tmp_path):
    code, _, err = _invoke(
        capsys, "tools", str(EVENTS / "tool_get_wines.json"), "--env-vars", str(tmp_path / "nope.json")
    )
    assert code == 2 and "nope.json" in err


# ------------------------------------------------------------------------ template ----------


def test_template_gives_the_webhook_route_and_environment():
    spec = find_function("WebhookFunction", TEMPLATE)

    assert isinstance(spec, FunctionSpec)
    assert sorted(spec.routes) == [("GET", "/health"), ("POST", "/telegram/webhook")]
    assert spec.handler == "ingress.handler"
    assert spec.code_uri == "functions/webhook"
    assert spec.code_dir == ROOT / "functions" / "webhook"
    assert spec.timeout == 10 and spec.memory == 256
    environment = spec.environment
    assert environment["TELEGRAM_WEBHOOK_SECRET"] == ""  # a literal empty value
    assert environment["QUEUE_URL"] == ""  # !Ref TurnQueue: unset locally
    assert environment["TELEGRAM_WEBHOOK_SECRET_ARN"] == ""  # !Ref WebhookSecretToken: unset locally
    assert "SOMMELIER_SECRETS_ARN" not in environment  # the webhook never reads the bot token or keys
    assert environment["POWERTOOLS_SERVICE_NAME"] == "sommelier"  # merged from Globals
    assert environment["POWERTOOLS_PARAMETERS_MAX_AGE"] == "300"
    assert ("POST", "/telegram/webhook", "WebhookFunction") in http_routes(TEMPLATE)


def test_template_gives_the_migrate_function():
    spec = find_function("MigrateFunction", TEMPLATE)

    assert spec.handler == "app.handler"
    assert spec.handler_module == "app" and spec.handler_function == "handler"
    assert spec.handler_file == ROOT / "functions" / "migrate" / "app.py"
    assert spec.timeout == 300 and spec.memory == 256
    assert spec.routes == []
    assert spec.environment["DATABASE_URL"] == ""
    assert spec.environment["DATABASE_SECRET_ARN"] == ""  # !GetAtt: unset locally


def test_template_functions_and_shorthands():
    specs = functions(TEMPLATE)
    assert {"WineToolsFunction", "MigrateFunction", "WebhookFunction", "AgentFunction"} <= set(specs)
    agent = specs["AgentFunction"]
    assert agent.timeout == 120  # !Ref AgentTimeoutSeconds -> the parameter's default
    assert agent.memory == 1024
    assert agent.environment["EMBEDDING_PROVIDER"] == "openai"
    assert agent.environment["SQS_MAX_RECEIVES"] == "5"
    assert specs["WineToolsFunction"].memory == 512
    assert find_function("webhook", TEMPLATE).logical_id == "WebhookFunction"
    assert find_function("agent", TEMPLATE).logical_id == "AgentFunction"
    assert find_function("tools", TEMPLATE).logical_id == "WineToolsFunction"
    assert find_function("winetoolsfunction", TEMPLATE).logical_id == "WineToolsFunction"
    assert find_function("migrate", TEMPLATE).logical_id == "MigrateFunction"
    with pytest.raises(UnknownFunction):
        find_function("nothing", TEMPLATE)


# ------------------------------------------------------------------------ a toy template ----


@pytest.fixture
def toy(tmp_path):
    """A small SAM project: Globals, a handler that reports what it sees, one that raises."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "helper.py").write_text("GREETING = 'привет'\n", encoding="utf-8")
    (tmp_path / "src" / "app.py").write_text(
        textwrap.dedent("""
        import logging
        import os
        import sys

        import helper  # a sibling module: <CodeUri> is on sys.path, as /var/task is in Lambda

        # A logger configured before the invocation, writing to the real stdout (like Powertools'
        # Logger once another module has set it up): its lines must still go to stderr.
        preconfigured = logging.getLogger("toy-preconfigured")

        def handler(event, context):
            print("this print goes to stderr")
            preconfigured.warning("and so does this log line")
            os.environ["LEAKED_BY_HANDLER"] = "1"
            return {
                "event": event,
                "greeting": helper.GREETING,
                "env": {k: os.environ.get(k) for k in ("FROM_GLOBALS", "LITERAL", "OVERRIDDEN", "FROM_SHELL",
                                                       "FROM_FILE_ONLY", "INTRINSIC")},
                "function_name": context.function_name,
                "memory": context.memory_limit_in_mb,
                "remaining_ms": context.get_remaining_time_in_millis(),
                "arn": context.invoked_function_arn,
                "request_id": context.aws_request_id,
                "log_group": context.log_group_name,
                "lambda_name": os.environ.get("AWS_LAMBDA_FUNCTION_NAME"),
            }

        def broken(event, context):
            raise ValueError("boom\\nsecond line")
    """),
        encoding="utf-8",
    )
    (tmp_path / "template.yaml").write_text(
        textwrap.dedent("""
        AWSTemplateFormatVersion: "2010-09-09"
        Transform: AWS::Serverless-2016-10-31
        Parameters:
          Size:
            Type: Number
            Default: 384
        Globals:
          Function:
            Runtime: python3.12
            Timeout: 7
            Environment:
              Variables:
                FROM_GLOBALS: globals
                OVERRIDDEN: from-globals
        Resources:
          Queue:
            Type: AWS::SQS::Queue
          ToyFunction:
            Type: AWS::Serverless::Function
            Properties:
              CodeUri: src
              Handler: app.handler
              MemorySize: !Ref Size
              Environment:
                Variables:
                  LITERAL: template
                  OVERRIDDEN: template
                  FROM_SHELL: template
                  INTRINSIC: !Ref Queue
              Events:
                Hello:
                  Type: HttpApi
                  Properties:
                    Method: get
                    Path: /hello
          BrokenFunction:
            Type: AWS::Serverless::Function
            Properties:
              CodeUri: src
              Handler: app.broken
    """),
        encoding="utf-8",
    )
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "local-env.json").write_text(
        json.dumps(
            {
                "ToyFunction": {"OVERRIDDEN": "env-file", "FROM_SHELL": "env-file", "FROM_FILE_ONLY": "env-file"},
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "event.json").write_text(json.dumps({"hello": "мир"}), encoding="utf-8")
    return tmp_path


def test_toy_template_spec(toy):
    spec = find_function("toy", toy / "template.yaml")
    assert spec.timeout == 7  # from Globals
    assert spec.memory == 384  # !Ref Size -> its default
    assert spec.routes == [("GET", "/hello")]
    assert spec.environment == {
        "FROM_GLOBALS": "globals",
        "OVERRIDDEN": "template",
        "LITERAL": "template",
        "FROM_SHELL": "template",
        "INTRINSIC": "",
    }


def test_environment_layers_context_and_cleanup(toy, capsys, monkeypatch):
    monkeypatch.setenv("FROM_SHELL", "shell")
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    monkeypatch.delenv("LEAKED_BY_HANDLER", raising=False)
    before = dict(os.environ)
    path_before = list(sys.path)
    preconfigured = logging.getLogger("toy-preconfigured")
    stdout_handler = logging.StreamHandler(sys.stdout)
    preconfigured.addHandler(stdout_handler)
    preconfigured.propagate = False
    try:
        code, out, err = _invoke(
            capsys, "ToyFunction", str(toy / "event.json"), "--template", str(toy / "template.yaml")
        )
    finally:
        preconfigured.removeHandler(stdout_handler)
        preconfigured.propagate = True
    assert stdout_handler.stream is sys.stdout  # handed back afterwards

    assert code == 0, err
    result = json.loads(out)
    assert result["event"] == {"hello": "мир"}
    assert "мир" in out  # printed with ensure_ascii=False
    assert result["greeting"] == "привет"
    assert result["env"] == {
        "FROM_GLOBALS": "globals",  # template literal (Globals)
        "LITERAL": "template",  # template literal
        "OVERRIDDEN": "env-file",  # events/local-env.json beats the template
        "FROM_SHELL": "shell",  # the process environment beats both
        "FROM_FILE_ONLY": "env-file",
        "INTRINSIC": None,  # !Ref: unset locally
    }
    assert result["function_name"] == result["lambda_name"] == "sommelier-ToyFunction-local"
    assert result["memory"] == 384
    assert 0 < result["remaining_ms"] <= 7000
    assert result["arn"].startswith("arn:aws:lambda:")
    assert result["arn"].endswith(":function:sommelier-ToyFunction-local")
    assert len(result["request_id"]) == 36
    assert result["log_group"] == "/aws/lambda/sommelier-ToyFunction-local"
    assert "this print goes to stderr" in err and "and so does this log line" in err
    assert dict(os.environ) == before  # LEAKED_BY_HANDLER and the Lambda variables are gone
    assert sys.path == path_before
    assert "helper" not in sys.modules


def test_explicit_env_vars_file(toy, capsys, tmp_path):
    custom = tmp_path / "custom-env.json"
    custom.write_text(
        json.dumps({"Parameters": {"LITERAL": "all-functions"}, "ToyFunction": {"FROM_FILE_ONLY": "custom"}}),
        encoding="utf-8",
    )

    code, out, err = _invoke(
        capsys,
        "toyfunction",
        str(toy / "event.json"),
        "--template",
        str(toy / "template.yaml"),
        "--env-vars",
        str(custom),
    )

    assert code == 0, err
    env = json.loads(out)["env"]
    assert env["LITERAL"] == "all-functions"
    assert env["FROM_FILE_ONLY"] == "custom"
    assert env["OVERRIDDEN"] == "template"  # events/local-env.json is not read when --env-vars is given


def test_a_raising_handler_exits_1_with_one_line(toy, capsys):
    code, out, err = _invoke(
        capsys, "BrokenFunction", str(toy / "event.json"), "--template", str(toy / "template.yaml")
    )

    assert code == 1
    assert out == ""
    assert "ValueError: boom" in err
    assert "second line" not in err and "Traceback" not in err


def test_debug_prints_the_traceback(toy, capsys):
    code, _, err = _invoke(
        capsys, "BrokenFunction", str(toy / "event.json"), "--template", str(toy / "template.yaml"), "--debug"
    )

    assert code == 1
    assert "Traceback" in err and "raise ValueError" in err


# ------------------------------------------------------------------------ Lambda mode: group commands


@pytest.mark.parametrize(
    "sample,chat_id,expected",
    [("webhook_group_start.json", -1001876543210, "сомелье"), ("webhook_topic_help.json", -1001999888777, "/reset")],
)
def test_group_and_topic_commands_with_the_bots_username_are_answered_in_lambda_mode(
    fresh_db, state_dir, monkeypatch, capsys, telegram, sample, chat_id, expected
):
    """`sommelier invoke WebhookFunction` with events/env.json: no queue, so the webhook runs the agent's
    turn inline (the consumer and its router), against the fake Bot API."""

    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    message = json.loads(json.loads((EVENTS / sample).read_text("utf-8"))["body"])["message"]
    if message.get("is_topic_message"):  # the sample's chat is a forum: the fake refuses a topic elsewhere
        telegram.open_forum(chat_id, message["message_thread_id"])
    try:
        code, out, err = _invoke(capsys, "WebhookFunction", str(EVENTS / sample))
    finally:
        pass
    assert code == 0, err
    response = json.loads(out)
    assert response["statusCode"] == 200 and json.loads(response["body"]) == {"ok": True}, response
    sent = [c.params.get("text") or c.params.get("caption") or "" for c in telegram.sent_messages(chat_id)]
    assert sent and expected in " ".join(sent).lower()
