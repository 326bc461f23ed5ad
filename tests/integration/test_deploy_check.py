"""`sommelier deploy check` against a stack on moto's CloudFormation (the queues, a secret with the bot token,
the alarms and the outputs the template declares), the fake Bot API, a local health endpoint and the real
tool-function handler behind a local Lambda Invoke endpoint (on the embedded PostgreSQL); a thread stands
in for the agent that consumes the turn queue."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from moto import mock_aws
from sommelier.settings import load_settings
from sommelier_dev import deploy_check

REGION = "eu-central-1"
WEBHOOK_URL = "https://abc123.execute-api.eu-central-1.amazonaws.com/telegram/webhook"
ADMIN_CHAT = -1001234567890


def stack_template(secret_arn: str, alarm_names: list[str], health_url: str, admin_chat: str) -> str:
    """The queues and the outputs the checks read. Moto's CloudFormation has no alarms or secrets: those
    are made directly and named in the outputs, as the template's AlarmNames and BotSecretsArn do."""
    return json.dumps(
        {
            "Resources": {
                "TurnQueue": {"Type": "AWS::SQS::Queue", "Properties": {"FifoQueue": True, "QueueName": "t.fifo"}},
                "TurnDeadLetterQueue": {
                    "Type": "AWS::SQS::Queue",
                    "Properties": {"FifoQueue": True, "QueueName": "d.fifo"},
                },
            },
            "Outputs": {
                "WebhookUrl": {"Value": WEBHOOK_URL},
                "HealthUrl": {"Value": health_url},
                "TurnQueueUrl": {"Value": {"Ref": "TurnQueue"}},
                "DeadLetterQueueUrl": {"Value": {"Ref": "TurnDeadLetterQueue"}},
                "BotSecretsArn": {"Value": secret_arn},
                "AlarmNames": {"Value": ",".join(alarm_names)},
                "AdminChatId": {"Value": admin_chat},
                "WineToolsFunctionName": {"Value": "wine-tools"},
            },
        }
    )


class _Health(BaseHTTPRequestHandler):
    answer = {"ok": True, "version": "1.2.3", "revision": "abc1234", "queue": True}

    def do_GET(self):  # noqa: N802
        body = json.dumps(self.answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def health():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/health"
    server.shutdown()


@pytest.fixture
def tools(catalog_db):
    """The deployed tool function, with the shipped catalogue in its database."""
    from sommelier.toolfn.handler import handle

    from tests.fakes.lambda_invoke import LocalLambda

    with LocalLambda("wine-tools", lambda event: handle(event, catalog_db)) as local:
        yield local


@pytest.fixture
def aws(monkeypatch):
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield boto3.session.Session(region_name=REGION)


def create_stack(session, telegram, health, name="sommelier", admin_chat=str(ADMIN_CHAT)) -> dict[str, str]:
    secret = session.client("secretsmanager").create_secret(
        Name=f"{name}-bot", SecretString=json.dumps({"telegram_bot_token": telegram.token})
    )["ARN"]
    alarms = [f"{name}-OldestTurnAgeAlarm-X1", f"{name}-DeadLetterQueueAlarm-X2"]
    for alarm in alarms:
        session.client("cloudwatch").put_metric_alarm(
            AlarmName=alarm,
            Namespace="AWS/SQS",
            MetricName="ApproximateAgeOfOldestMessage",
            Statistic="Maximum",
            Period=300,
            EvaluationPeriods=1,
            Threshold=900,
            ComparisonOperator="GreaterThanThreshold",
        )
    cloudformation = session.client("cloudformation")
    cloudformation.create_stack(StackName=name, TemplateBody=stack_template(secret, alarms, health, admin_chat))
    outputs = cloudformation.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]
    return {o["OutputKey"]: o["OutputValue"] for o in outputs}


def register_webhook(telegram, url: str) -> None:
    import urllib.parse
    import urllib.request

    data = urllib.parse.urlencode({"url": url}).encode()
    with urllib.request.urlopen(f"{telegram.api_url}/setWebhook", data=data, timeout=5) as response:  # noqa: S310
        assert response.status == 200


class Agent(threading.Thread):
    """Consumes the turn queue as the agent would, or dead-letters what it takes."""

    def __init__(self, session, outputs, *, dead_letter: bool = False):
        super().__init__(daemon=True)
        self.sqs = session.client("sqs")
        self.queue, self.dead = outputs["TurnQueueUrl"], outputs["DeadLetterQueueUrl"]
        self.dead_letter = dead_letter
        self.taken: list[dict] = []
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            got = self.sqs.receive_message(QueueUrl=self.queue, AttributeNames=["All"], WaitTimeSeconds=0)
            for message in got.get("Messages", []):
                self.taken.append(message)
                if self.dead_letter:
                    self.sqs.send_message(
                        QueueUrl=self.dead,
                        MessageBody=message["Body"],
                        MessageGroupId=message["Attributes"]["MessageGroupId"],
                        MessageDeduplicationId=message["Attributes"]["MessageDeduplicationId"],
                    )
                self.sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=message["ReceiptHandle"])
            self.stopped.wait(0.02)


def settings_for(telegram):
    # No TELEGRAM_BOT_TOKEN: the token comes from the stack's BotSecrets, as for an operator.
    return load_settings({"TELEGRAM_API_BASE_URL": telegram.base_url})


def statuses(checks) -> dict[str, str]:
    return {c.name: c.status for c in checks}


def test_a_deployed_stack_that_answers_passes_every_check(aws, telegram, health, tools):
    outputs = create_stack(aws, telegram, health)
    register_webhook(telegram, WEBHOOK_URL)
    agent = Agent(aws, outputs)
    agent.start()
    try:
        checks = deploy_check.run_checks(
            aws, settings_for(telegram), "sommelier", turn_timeout_s=10, poll_s=0.05, lambda_client=tools.client()
        )
    finally:
        agent.stopped.set()
        agent.join()
    assert statuses(checks) == {
        "stack": "ok",
        "webhook": "ok",
        "health": "ok",
        "catalog": "ok",
        "turn": "ok",
        "alarms": "ok",
    }
    assert tools.invocations == ["catalog_stats"]
    details = {c.name: c.detail for c in checks}
    assert WEBHOOK_URL in details["webhook"] and "version 1.2.3" in details["health"]
    assert details["alarms"].startswith("2 alarms")
    (message,) = agent.taken
    update = json.loads(message["Body"])
    assert message["Attributes"]["MessageGroupId"] == str(ADMIN_CHAT)  # the admin chat's own message group
    assert message["Attributes"]["MessageDeduplicationId"] == str(update["update_id"])
    assert update["message"]["chat"]["id"] == ADMIN_CHAT
    assert update["message"]["text"] == f"/stats@{telegram.bot_username}"  # a group: addressed to the bot


def test_what_an_operator_would_meet_is_named_with_its_fix(aws, telegram, health, empty_db):
    from sommelier.toolfn.handler import handle

    from tests.fakes.lambda_invoke import LocalLambda

    create_stack(aws, telegram, health)
    register_webhook(telegram, "https://elsewhere.example.com/hook")
    name = "sommelier-OldestTurnAgeAlarm-X1"
    aws.client("cloudwatch").set_alarm_state(AlarmName=name, StateValue="ALARM", StateReason="test")
    with LocalLambda("wine-tools", lambda event: handle(event, empty_db)) as empty:  # a new stack's database
        checks = deploy_check.run_checks(
            aws, settings_for(telegram), "sommelier", turn_timeout_s=0.3, poll_s=0.05, lambda_client=empty.client()
        )
    by_name = {c.name: c for c in checks}
    assert by_name["catalog"].blocking and "empty" in by_name["catalog"].detail
    assert "CatalogDropPrefix" in by_name["catalog"].fix
    assert by_name["webhook"].blocking and "elsewhere.example.com" in by_name["webhook"].detail
    assert by_name["webhook"].fix == f'sommelier webhook set "{WEBHOOK_URL}"'
    assert by_name["turn"].blocking and "still holds" in by_name["turn"].detail  # nobody consumes the queue
    assert by_name["alarms"].blocking and name in by_name["alarms"].detail
    assert by_name["health"].status == "ok"


def test_a_turn_that_reaches_the_dead_letter_queue_fails(aws, telegram, health):
    outputs = create_stack(aws, telegram, health)
    agent = Agent(aws, outputs, dead_letter=True)
    agent.start()
    try:
        stack = deploy_check.read_stack(aws, "sommelier")
        check = deploy_check.check_turn(aws, stack, None, timeout_s=10, poll_s=0.05)
    finally:
        agent.stopped.set()
        agent.join()
    assert check.blocking and "dead-letter" in check.detail
    assert json.loads(agent.taken[0]["Body"])["message"]["text"] == "/stats"  # no username known


def test_no_admin_chat_skips_the_turn_and_a_missing_stack_is_one_clear_line(aws, telegram, health, tools):
    create_stack(aws, telegram, health, name="quiet", admin_chat="")
    register_webhook(telegram, WEBHOOK_URL)
    checks = deploy_check.run_checks(aws, settings_for(telegram), "quiet", poll_s=0.05, lambda_client=tools.client())
    assert statuses(checks)["turn"] == "skip"
    assert not [c for c in checks if c.blocking]
    missing = deploy_check.run_checks(aws, settings_for(telegram), "nonexistent")
    assert [(c.name, c.status) for c in missing] == [("stack", "fail")]


def test_the_command_exits_non_zero_when_a_check_fails(aws, telegram, health, tools, monkeypatch, capsys):
    from sommelier_dev.cli.main import main

    create_stack(aws, telegram, health)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", tools.endpoint_url)  # boto3's own per-service override
    for name in ("TELEGRAM_BOT_TOKEN", "SOMMELIER_SECRETS_ARN", "MODEL_KEYS_SECRET_ARN", "TELEGRAM_WEBHOOK_SECRET_ARN"):
        monkeypatch.delenv(name, raising=False)
    assert main(["deploy", "check", "--stack", "sommelier", "--no-turn"]) == 1  # the webhook is not set
    register_webhook(telegram, WEBHOOK_URL)
    assert main(["deploy", "check", "--stack", "sommelier", "--no-turn", "--region", REGION]) == 0
    output = capsys.readouterr().out
    assert "✗ webhook" in output and "✓ webhook" in output and "the stack sommelier answers" in output
    assert telegram.token not in output
