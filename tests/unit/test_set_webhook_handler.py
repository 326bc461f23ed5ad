"""The set-webhook custom-resource handler (functions/set_webhook/app.py).

One tiny HTTP server on 127.0.0.1 stands in for both the Telegram Bot API (TELEGRAM_API_BASE_URL)
and CloudFormation's pre-signed S3 ResponseURL. The secret comes from the environment, or from a
moto Secrets Manager through Powertools Parameters.
"""

from __future__ import annotations

import importlib.util
import io
import json
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.fakes.cloudformation import BudgetedContext, CloudFormationResponses, SilentServer

ROOT = Path(__file__).resolve().parents[2]
APP_PATH = ROOT / "functions" / "set_webhook" / "app.py"

TOKEN = "7012345678:AAFakeTokenForTestsOnly_abcdefghijklmn"
SECRET_TOKEN = "Q3xv9LkP0aZ7mN2bC5dE8fG1hJ4kL6mN9pR2sT5uV8wX1yZ4"  # 48 letters and digits
WEBHOOK_URL = "https://abc123defg.execute-api.eu-central-1.amazonaws.com/telegram/webhook"
ALLOWED = [
    "message",
    "edited_message",
    "callback_query",
    "my_chat_member",
    "business_connection",
    "business_message",
]


class _FakeTelegramAndCloudFormation(CloudFormationResponses):
    def do_POST(self):  # noqa: N802 - the Bot API
        server = self.server
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        _, _, rest = self.path.partition("/bot")
        token, _, method = rest.partition("/")
        server.calls.append(
            {"token": token, "method": method, "body": body, "content_type": self.headers.get("Content-Type")}
        )
        scripted = server.script.get(method)
        if scripted:
            status, answer = scripted.pop(0)
        elif token != server.valid_token:
            status, answer = 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        elif method == "setWebhook":
            server.webhook_url = body.get("url", "")
            status, answer = 200, {"ok": True, "result": True, "description": "Webhook was set"}
        elif method == "getWebhookInfo":
            status, answer = (
                200,
                {
                    "ok": True,
                    "result": {"url": server.webhook_url, "has_custom_certificate": False, "pending_update_count": 0},
                },
            )
        elif method == "setMyCommands":
            server.commands = body.get("commands")
            status, answer = 200, {"ok": True, "result": True}
        elif method == "deleteWebhook":
            server.webhook_url = ""
            status, answer = 200, {"ok": True, "result": True, "description": "Webhook was deleted"}
        else:
            status, answer = 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeTelegramAndCloudFormation)
    server.calls, server.responses, server.script = [], [], {}
    server.valid_token = TOKEN
    server.webhook_url = ""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    host, port = server.server_address
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", f"http://{host}:{port}/")
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def logs():
    return io.StringIO()


@pytest.fixture
def app(monkeypatch, logs):
    """Load app.py by path, its log output captured in `logs`, with no real sleeping."""
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sommelier")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", SECRET_TOKEN)
    monkeypatch.delenv("SOMMELIER_SECRETS_ARN", raising=False)
    spec = importlib.util.spec_from_file_location("set_webhook_app_under_test", APP_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from sommelier.observability.shell import shell_logger

    shell = shell_logger("sommelier-set-webhook")  # what the handler's work sets up: its lines go to `logs`
    handler = shell.registered_handler
    previous_stream = handler.setStream(logs)
    shell.setLevel("DEBUG")
    sleeps: list[float] = []
    monkeypatch.setattr(module.time, "sleep", sleeps.append)
    module.sleeps = sleeps
    yield module
    handler.setStream(previous_stream)


class _Context:
    function_name = "sommelier-SetWebhookFunction-abc"
    function_version = "$LATEST"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-SetWebhookFunction-abc"
    aws_request_id = "5f0c2d4e-0000-4000-8000-000000000002"
    log_group_name = "/aws/lambda/sommelier-SetWebhookFunction-abc"
    log_stream_name = "2025/01/01/[$LATEST]fedcba9876543210"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 60_000


def _event(server, request_type: str, url: str = WEBHOOK_URL, **extra) -> dict:
    host, port = server.server_address
    properties = {
        "ServiceToken": _Context.invoked_function_arn,
        "ServiceTimeout": "120",
        "Url": url,
        "SecretsArn": "arn:aws:secretsmanager:eu-central-1:123456789012:secret:BotSecrets-AbCdEf",
    }
    event = {
        "RequestType": request_type,
        "ServiceToken": _Context.invoked_function_arn,
        "ResponseURL": f"http://{host}:{port}/cfn-response?X-Amz-Signature=abc",
        "StackId": "arn:aws:cloudformation:eu-central-1:123456789012:stack/sommelier/1f2e3d4c",
        "RequestId": "0b1c2d3e-aaaa-4bbb-8ccc-ddddeeeeffff",
        "ResourceType": "Custom::TelegramWebhook",
        "LogicalResourceId": "TelegramWebhook",
        "ResourceProperties": properties,
    }
    event.update(extra)
    return event


def _only_response(server) -> dict:
    assert len(server.responses) == 1, server.responses
    response = server.responses[0]
    assert response["path"] == "/cfn-response?X-Amz-Signature=abc"
    assert response["content_type"] == ""  # the pre-signed URL is signed without a content type
    return response["body"]


def _methods(server) -> list[str]:
    return [call["method"] for call in server.calls]


def _assert_no_secrets_leak(server, logs):
    text = logs.getvalue() + json.dumps(server.responses)
    assert TOKEN not in text
    assert TOKEN.split(":")[1] not in text
    assert SECRET_TOKEN not in text


# ------------------------------------------------------------------------------ create ----


def test_create_sets_the_webhook_with_the_secret_token(app, server, logs):
    event = _event(server, "Create")

    assert app.handler(event, _Context()) is None

    assert _methods(server) == ["setWebhook", "setMyCommands"]
    call = server.calls[0]
    assert call["token"] == TOKEN
    assert call["content_type"] == "application/json"
    assert call["body"]["url"] == WEBHOOK_URL
    assert call["body"]["secret_token"] == SECRET_TOKEN
    assert call["body"]["allowed_updates"] == ALLOWED
    body = _only_response(server)
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "sommelier-telegram-webhook"
    assert body["StackId"] == event["StackId"]
    assert body["RequestId"] == event["RequestId"]
    assert body["LogicalResourceId"] == "TelegramWebhook"
    assert body["Data"] == {"Url": WEBHOOK_URL}
    assert _Context.log_stream_name in body["Reason"]
    _assert_no_secrets_leak(server, logs)


def test_allowed_updates_and_the_menu_come_from_the_registration_module(app, server):
    from sommelier.telegram.registration import ALLOWED_UPDATES, MENU

    app.handler(_event(server, "Create"), _Context())

    assert server.calls[0]["body"]["allowed_updates"] == list(ALLOWED_UPDATES) == ALLOWED
    assert server.calls[1]["method"] == "setMyCommands"
    assert (
        [c["command"] for c in server.calls[1]["body"]["commands"]]
        == list(MENU)
        == ["start", "help", "reset", "profile", "privacy", "forget"]
    )
    assert all(c["description"] and not c["description"].isascii() for c in server.calls[1]["body"]["commands"])
    assert "menu /start /help /reset" in _only_response(server)["Reason"]


def test_an_explicit_allowed_updates_property_overrides(app, server):
    event = _event(server, "Create")
    event["ResourceProperties"]["AllowedUpdates"] = ["message"]

    app.handler(event, _Context())

    assert server.calls[0]["body"]["allowed_updates"] == ["message"]


def test_a_refused_menu_does_not_fail_the_deploy(app, server):
    server.script["setMyCommands"] = [
        (400, {"ok": False, "error_code": 400, "description": "Bad Request: BOT_COMMAND_INVALID"})
    ]

    app.handler(_event(server, "Create"), _Context())

    body = _only_response(server)
    assert body["Status"] == "SUCCESS" and "menu not set" in body["Reason"] and "BOT_COMMAND_INVALID" in body["Reason"]


def test_update_points_the_webhook_at_the_new_url(app, server):
    new_url = "https://zzz999yyyy.execute-api.eu-central-1.amazonaws.com/telegram/webhook"
    event = _event(
        server,
        "Update",
        url=new_url,
        PhysicalResourceId="sommelier-telegram-webhook",
        OldResourceProperties={"Url": WEBHOOK_URL},
    )

    app.handler(event, _Context())

    assert _methods(server) == ["setWebhook", "setMyCommands"]
    assert server.webhook_url == new_url
    body = _only_response(server)
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "sommelier-telegram-webhook"  # unchanged: no Delete follows


def test_a_rejected_token_fails_create_without_leaking_it(app, server, logs):
    server.valid_token = "0:other"

    app.handler(_event(server, "Create"), _Context())  # must not raise

    body = _only_response(server)
    assert body["Status"] == "FAILED"
    assert "401" in body["Reason"] and "Unauthorized" in body["Reason"]
    assert "\n" not in body["Reason"] and "Traceback" not in body["Reason"]
    assert body["PhysicalResourceId"] == "sommelier-telegram-webhook-not-created"
    assert _methods(server) == ["setWebhook"]  # a 401 is not retried
    _assert_no_secrets_leak(server, logs)


def test_a_non_https_url_is_refused(app, server):
    app.handler(_event(server, "Create", url="http://example.com/hook"), _Context())

    body = _only_response(server)
    assert body["Status"] == "FAILED"
    assert "https" in body["Reason"]
    assert server.calls == []


def test_429_waits_retry_after_and_tries_again(app, server):
    too_many = {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 3",
        "parameters": {"retry_after": 3},
    }
    server.script["setWebhook"] = [(429, too_many)]

    app.handler(_event(server, "Create"), _Context())

    assert _methods(server) == ["setWebhook", "setWebhook", "setMyCommands"]
    assert app.sleeps == [3]
    assert _only_response(server)["Status"] == "SUCCESS"


def test_server_errors_are_retried_then_reported(app, server):
    bad_gateway = (502, {"ok": False, "error_code": 502, "description": "Bad Gateway"})
    server.script["setWebhook"] = [bad_gateway, bad_gateway, bad_gateway]

    app.handler(_event(server, "Create"), _Context())

    assert _methods(server) == ["setWebhook"] * 3
    body = _only_response(server)
    assert body["Status"] == "FAILED"
    assert "502" in body["Reason"]


def test_missing_credentials_fail_clearly(app, server, monkeypatch):
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET")

    app.handler(_event(server, "Create"), _Context())

    body = _only_response(server)
    assert body["Status"] == "FAILED"
    assert "secret token" in body["Reason"]
    assert server.calls == []


# ------------------------------------------------------------------------------ delete ----


def test_delete_removes_our_webhook(app, server, logs):
    server.webhook_url = WEBHOOK_URL

    app.handler(_event(server, "Delete", PhysicalResourceId="sommelier-telegram-webhook"), _Context())

    assert _methods(server) == ["getWebhookInfo", "deleteWebhook"]
    assert server.webhook_url == ""
    body = _only_response(server)
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "sommelier-telegram-webhook"
    _assert_no_secrets_leak(server, logs)


def test_delete_leaves_a_webhook_that_points_elsewhere(app, server):
    server.webhook_url = "https://my-laptop.example.ngrok.app/telegram/webhook"

    app.handler(_event(server, "Delete", PhysicalResourceId="sommelier-telegram-webhook"), _Context())

    assert _methods(server) == ["getWebhookInfo"]
    assert server.webhook_url.startswith("https://my-laptop")
    assert _only_response(server)["Status"] == "SUCCESS"


def test_delete_after_a_failed_create_calls_nothing(app, server):
    app.handler(_event(server, "Delete", PhysicalResourceId="sommelier-telegram-webhook-not-created"), _Context())

    assert server.calls == []
    assert _only_response(server)["Status"] == "SUCCESS"


def test_delete_succeeds_even_when_telegram_fails(app, server):
    server.valid_token = "0:other"  # e.g. the token was revoked

    app.handler(_event(server, "Delete", PhysicalResourceId="sommelier-telegram-webhook"), _Context())

    body = _only_response(server)
    assert body["Status"] == "SUCCESS"  # a stack must always be deletable
    assert "not deleted" in body["Reason"]


def test_unknown_request_type_fails(app, server):
    app.handler(_event(server, "Rename"), _Context())

    assert _only_response(server)["Status"] == "FAILED"
    assert server.calls == []


def test_unreachable_telegram_and_response_url_do_not_raise(app, monkeypatch, logs):
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", "http://127.0.0.1:9")
    event = _event(type("S", (), {"server_address": ("127.0.0.1", 9)})(), "Create")

    assert app.handler(event, _Context()) is None  # logged, retried, never raised
    assert logs.getvalue(), "the failures were logged"


# ------------------------------------------------------------------------------ secret ----


def test_credentials_come_from_secrets_manager(app, server, monkeypatch, logs):
    import boto3
    import moto
    from aws_lambda_powertools.utilities.parameters import base

    for name, value in {
        "AWS_DEFAULT_REGION": "eu-central-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN")
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET")
    monkeypatch.setattr(base, "DEFAULT_PROVIDERS", {})  # no provider bound to another test's client
    with moto.mock_aws():
        arn = boto3.client("secretsmanager").create_secret(
            Name="sommelier-BotSecrets",
            SecretString=json.dumps(
                {
                    "telegram_bot_token": TOKEN,
                    "openai_api_key": "sk-or-v1-test",
                    "embedding_api_key": "",
                    "telegram_webhook_secret": SECRET_TOKEN,
                }
            ),
        )["ARN"]
        monkeypatch.setenv("SOMMELIER_SECRETS_ARN", arn)

        app.handler(_event(server, "Create"), _Context())

    assert _methods(server) == ["setWebhook", "setMyCommands"]
    assert server.calls[0]["token"] == TOKEN
    assert server.calls[0]["body"]["secret_token"] == SECRET_TOKEN
    assert _only_response(server)["Status"] == "SUCCESS"
    _assert_no_secrets_leak(server, logs)


# ------------------------------------------------------------------------------ budget ----


def _in_time(server, context) -> dict:
    body = _only_response(server)
    assert server.responses[0]["received_at"] < context.deadline, "answered before the function's timeout"
    return body


def test_a_long_flood_wait_fails_create_at_once_instead_of_sleeping(app, server):
    flood = {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 3600"}
    server.script["setWebhook"] = [(429, {**flood, "parameters": {"retry_after": 3600}})]
    context = BudgetedContext(4)

    app.handler(_event(server, "Create"), context)

    body = _in_time(server, context)
    assert body["Status"] == "FAILED" and "429" in body["Reason"]
    assert body["PhysicalResourceId"] == "sommelier-telegram-webhook-not-created"
    assert _methods(server) == ["setWebhook"] and app.sleeps == []


def test_a_flood_wait_longer_than_the_budget_is_not_waited(app, server):
    flood = {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 5"}
    server.script["setWebhook"] = [(429, {**flood, "parameters": {"retry_after": 5}})]
    context = BudgetedContext(4)  # 3 s of work at most: a 5 s wait cannot fit

    app.handler(_event(server, "Create"), context)

    body = _in_time(server, context)
    assert body["Status"] == "FAILED" and "no time left" in body["Reason"]
    assert app.sleeps == []


def test_delete_under_flood_waits_still_succeeds_in_time(app, server):
    flood = {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 3600"}
    server.script["getWebhookInfo"] = [(429, {**flood, "parameters": {"retry_after": 3600}})]
    context = BudgetedContext(4)

    app.handler(_event(server, "Delete", PhysicalResourceId="sommelier-telegram-webhook"), context)

    body = _in_time(server, context)
    assert body["Status"] == "SUCCESS" and "not deleted" in body["Reason"]


@pytest.mark.parametrize("request_type,status", [("Create", "FAILED"), ("Delete", "SUCCESS")])
def test_a_telegram_that_never_answers_is_given_up_in_time(app, server, monkeypatch, request_type, status):
    with SilentServer() as silent:
        monkeypatch.setenv("TELEGRAM_API_BASE_URL", f"http://127.0.0.1:{silent.port}")
        context = BudgetedContext(4)
        app.handler(_event(server, request_type, PhysicalResourceId="sommelier-telegram-webhook"), context)
    body = _in_time(server, context)
    assert body["Status"] == status
    _assert_no_secrets_leak(server, io.StringIO())
