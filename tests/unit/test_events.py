"""events/: the sample events are valid JSON of the right shapes (docs/architecture.md, events/README.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
ALL_EVENTS = sorted(EVENTS.glob("*.json"))
WEBHOOK_EVENTS = sorted(EVENTS.glob("webhook_*.json"))
SQS_EVENTS = sorted(EVENTS.glob("sqs_*.json"))
UPDATE_KINDS = {"message", "edited_message", "callback_query", "my_chat_member"}
EXPECTED_WEBHOOK = {
    "text",
    "start",
    "photo",
    "sticker",
    "voice",
    "edited",
    "callback",
    "group_mention",
    "my_chat_member",
    "bad_secret",
    "duplicate",
    "base64",
}


def _load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _body(event: dict) -> dict:
    raw = event["body"]
    if event["isBase64Encoded"]:
        raw = base64.b64decode(raw, validate=True).decode("utf-8")
    return json.loads(raw)


def _ids(paths):
    return [p.name for p in paths]


def test_the_expected_samples_exist():
    assert {p.stem.removeprefix("webhook_") for p in WEBHOOK_EVENTS} >= EXPECTED_WEBHOOK
    assert {p.stem for p in SQS_EVENTS} >= {"sqs_text", "sqs_start", "sqs_callback"}
    assert (EVENTS / "env.json").is_file() and (EVENTS / "local-env.json").is_file()
    readme = (EVENTS / "README.md").read_text(encoding="utf-8")
    for path in ALL_EVENTS:
        assert f"`{path.name}`" in readme, f"{path.name} is not described in events/README.md"


@pytest.mark.parametrize("path", ALL_EVENTS, ids=_ids(ALL_EVENTS))
def test_every_event_parses(path):
    assert isinstance(_load(path), dict)


@pytest.mark.parametrize("path", WEBHOOK_EVENTS, ids=_ids(WEBHOOK_EVENTS))
def test_webhook_events_are_http_api_v2_with_a_telegram_update(path):
    event = _load(path)
    assert event["version"] == "2.0"
    assert event["routeKey"] == "POST /telegram/webhook"
    assert event["rawPath"] == "/telegram/webhook"
    headers = event["headers"]
    assert all(name == name.lower() for name in headers), "HTTP API v2 lower-cases header names"
    assert headers["content-type"] == "application/json"
    assert headers["x-telegram-bot-api-secret-token"]
    http = event["requestContext"]["http"]
    assert http["method"] == "POST" and http["path"] == "/telegram/webhook"
    assert http["sourceIp"]
    assert event["requestContext"]["routeKey"] == event["routeKey"]
    assert isinstance(event["isBase64Encoded"], bool)
    assert isinstance(event["body"], str)
    update = _body(event)
    assert isinstance(update["update_id"], int) and not isinstance(update["update_id"], bool)
    assert UPDATE_KINDS & set(update), update
    raw = base64.b64decode(event["body"]) if event["isBase64Encoded"] else event["body"].encode("utf-8")
    assert int(headers["content-length"]) == len(raw)


def test_only_the_bad_secret_sample_has_a_wrong_secret():
    env = _load(EVENTS / "env.json")
    local_secret = env["WebhookFunction"]["TELEGRAM_WEBHOOK_SECRET"]
    assert local_secret == "local-webhook-secret"
    for path in WEBHOOK_EVENTS:
        given = _load(path)["headers"]["x-telegram-bot-api-secret-token"]
        assert (given != local_secret) == (path.name == "webhook_bad_secret.json"), path.name
    for path in WEBHOOK_EVENTS:
        if path.name != "webhook_bad_secret.json":
            assert _load(path)["requestContext"]["http"]["sourceIp"] == "91.108.6.10"  # a Telegram address


def test_samples_cover_the_update_kinds():
    updates = {p.stem.removeprefix("webhook_"): _body(_load(p)) for p in WEBHOOK_EVENTS}
    assert updates["text"]["message"]["text"] == "красное сухое к стейку до 2000 ₽"
    assert updates["text"]["message"]["from"]["language_code"] == "ru"
    start = updates["start"]["message"]
    assert start["text"] == "/start" and start["entities"][0]["type"] == "bot_command"
    photo = updates["photo"]["message"]["photo"]
    assert photo and all({"file_id", "file_unique_id", "width", "height", "file_size"} <= set(p) for p in photo)
    assert "sticker" in updates["sticker"]["message"]
    assert "voice" in updates["voice"]["message"]
    edited = updates["edited"]["edited_message"]
    assert edited["edit_date"] > edited["date"]
    callback = updates["callback"]["callback_query"]
    assert {"id", "from", "message", "chat_instance"} <= set(callback) and callback["data"] == "fb:1:1"
    group = updates["group_mention"]["message"]
    assert group["chat"]["type"] == "supergroup" and group["chat"]["id"] < 0
    mention = group["entities"][0]
    assert mention["type"] == "mention"
    assert group["text"][mention["offset"] : mention["offset"] + mention["length"]] == "@sommelier_test_bot"
    member = updates["my_chat_member"]["my_chat_member"]
    assert (member["old_chat_member"]["status"], member["new_chat_member"]["status"]) == ("member", "kicked")
    assert _load(EVENTS / "webhook_base64.json")["isBase64Encoded"] is True


def test_the_duplicate_repeats_the_text_update():
    text = _body(_load(EVENTS / "webhook_text.json"))
    duplicate = _body(_load(EVENTS / "webhook_duplicate.json"))
    assert duplicate["update_id"] == text["update_id"]
    assert duplicate == text


def test_update_ids_are_unique_apart_from_the_duplicate():
    ids = [_body(_load(p))["update_id"] for p in WEBHOOK_EVENTS if p.name != "webhook_duplicate.json"]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("path", SQS_EVENTS, ids=_ids(SQS_EVENTS))
def test_sqs_events_are_fifo_records_of_a_telegram_update(path):
    records = _load(path)["Records"]
    assert records
    for record in records:
        assert record["eventSource"] == "aws:sqs"
        assert record["eventSourceARN"].startswith("arn:aws:sqs:") and record["eventSourceARN"].endswith(".fifo")
        assert record["messageId"] and record["receiptHandle"]
        attributes = record["attributes"]
        assert attributes["ApproximateReceiveCount"] == "1"
        assert attributes["SequenceNumber"].isdigit()
        update = json.loads(record["body"])
        assert isinstance(update["update_id"], int)
        assert attributes["MessageDeduplicationId"] == str(update["update_id"])
        kind = next(k for k in UPDATE_KINDS if k in update)
        chat = (update[kind]["message"] if kind == "callback_query" else update[kind])["chat"]
        assert attributes["MessageGroupId"] == str(chat["id"])
        assert record["md5OfBody"] == hashlib.md5(record["body"].encode("utf-8")).hexdigest()


def test_sqs_samples_carry_the_webhook_updates():
    for name in ("text", "start", "callback"):
        sqs = json.loads(_load(EVENTS / f"sqs_{name}.json")["Records"][0]["body"])
        assert sqs == _body(_load(EVENTS / f"webhook_{name}.json")), name


def test_local_env_file_keeps_everything_in_process():
    """events/local-env.json, the default of `sommelier invoke` (no Docker, no services)."""
    env = _load(EVENTS / "local-env.json")
    assert {"WebhookFunction", "AgentFunction", "WineToolsFunction"} <= set(env)
    for function, variables in env.items():
        assert isinstance(variables, dict), function
        assert all(isinstance(v, str) for v in variables.values()), function
    # AWS-only resources are empty, so the code runs inline / in-process.
    for name in ("QUEUE_URL", "IDEMPOTENCY_TABLE", "SOMMELIER_SECRETS_ARN"):
        assert env["WebhookFunction"][name] == ""
    for name in ("TOOL_FUNCTION_NAME", "IDEMPOTENCY_TABLE", "IMAGES_BUCKET", "SOMMELIER_SECRETS_ARN"):
        assert env["AgentFunction"][name] == ""
    assert env["WineToolsFunction"]["DATABASE_SECRET_ARN"] == ""
    for variables in env.values():
        for name, value in variables.items():
            if name.endswith(("_TOKEN", "_API_KEY")):
                assert value == "", name  # never a real credential in the repository


def test_sam_local_env_file_points_at_loopback_stand_ins():
    """events/env.json, for `sam local invoke --env-vars events/env.json --docker-network
    sommelier-sam-test`: the webhook enqueues to a local SQS (moto), the agent reaches the tool function
    through `sam local start-lambda` and the fake Bot API, all at the podman network's gateway (an
    address of this machine); nothing points at AWS or the internet."""
    env = _load(EVENTS / "env.json")
    template_functions = {
        "WebhookFunction",
        "AgentFunction",
        "WineToolsFunction",
        "MigrateFunction",
        "SetWebhookFunction",
    }
    assert template_functions <= set(env)
    webhook, agent = env["WebhookFunction"], env["AgentFunction"]
    assert webhook["QUEUE_URL"].startswith("http://10.89.77.1:5000/") and webhook["QUEUE_URL"].endswith(".fifo")
    assert webhook["AWS_ENDPOINT_URL"] == agent["AWS_ENDPOINT_URL"] == "http://10.89.77.1:5000"
    assert agent["TOOL_FUNCTION_NAME"] == "WineToolsFunction"
    assert agent["AWS_ENDPOINT_URL_LAMBDA"] == "http://10.89.77.1:3001"  # start-lambda's default port
    for variables in env.values():
        assert all(isinstance(v, str) for v in variables.values())
        for name, value in variables.items():
            if name.endswith(("_URL", "_URL_LAMBDA")) and value:
                assert re.match(r"^(https?|postgresql)://[^/]*10\.89\.77\.1[:/]", value), (name, value)
            if name.endswith(("_TOKEN", "_API_KEY")):
                assert value in ("", "123456:TEST-TOKEN"), name  # the fake Bot API's token, never a real one
            if name.endswith("_ARN"):
                assert value == "", name


def test_every_secret_arn_the_template_declares_is_emptied_for_sam_local():
    """`sam local` resolves `!Ref Secret` to a name no local service knows, and the function would ask Secrets
    Manager for it and crash: every *_ARN variable a function declares is set empty in events/env.json."""
    import cfnlint.decode

    template, _ = cfnlint.decode.decode(str(ROOT / "template.yaml"))
    env = _load(EVENTS / "env.json")
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        declared = resource["Properties"].get("Environment", {}).get("Variables", {})
        arns = {variable for variable in declared if variable.endswith("_ARN")}
        if arns:
            assert name in env, f"{name} declares {sorted(arns)}: give it an entry in events/env.json"
            assert {variable: env[name].get(variable) for variable in arns} == dict.fromkeys(arns, ""), name
