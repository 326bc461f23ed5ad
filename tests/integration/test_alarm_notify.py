"""Alarms reach the owner (issue 39): an SNS notification in the shape CloudWatch publishes, through the alarm
function's Lambda handler, to the fake Bot API's admin chat, in Russian with what to do."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADMIN_CHAT = -100515151


def sns_event(*messages: dict | str) -> dict:
    """An SNS delivery to a Lambda subscriber: one record per message, the alarm's JSON as Sns.Message."""
    return {
        "Records": [
            {
                "EventSource": "aws:sns",
                "EventVersion": "1.0",
                "EventSubscriptionArn": "arn:aws:sns:eu-central-1:123456789012:sommelier-AlarmTopic-X1:5f1c",
                "Sns": {
                    "Type": "Notification",
                    "MessageId": f"95df01b4-ee98-5cb9-9903-4c221d41eb5{i}",
                    "TopicArn": "arn:aws:sns:eu-central-1:123456789012:sommelier-AlarmTopic-X1",
                    "Subject": 'ALARM: "sommelier-LLMBudgetAlarm-1AB2C3" in EU (Frankfurt)',
                    "Message": message if isinstance(message, str) else json.dumps(message),
                    "Timestamp": "2026-12-02T04:05:00.000Z",
                    "SignatureVersion": "1",
                    "MessageAttributes": {},
                },
            }
            for i, message in enumerate(messages)
        ]
    }


def cloudwatch(name: str, state: str = "ALARM", old: str = "OK") -> dict:
    """The JSON CloudWatch publishes for an alarm's state change."""
    return {
        "AlarmName": name,
        "AlarmDescription": "At the last day's rate the month's LLM bill would exceed MonthlyLLMBudgetUSD.",
        "AWSAccountId": "123456789012",
        "AlarmConfigurationUpdatedTimestamp": "2026-11-30T10:00:00.000+0000",
        "NewStateValue": state,
        "NewStateReason": "Threshold Crossed: 1 out of the last 1 datapoints [123.4] was greater than the threshold (100.0).",
        "StateChangeTime": "2026-12-02T04:05:00.000+0000",
        "Region": "EU (Frankfurt)",
        "AlarmArn": f"arn:aws:cloudwatch:eu-central-1:123456789012:alarm:{name}",
        "OldStateValue": old,
        "OKActions": [],
        "AlarmActions": ["arn:aws:sns:eu-central-1:123456789012:sommelier-AlarmTopic-X1"],
        "InsufficientDataActions": [],
        "Trigger": {
            "Period": 86400,
            "EvaluationPeriods": 1,
            "ComparisonOperator": "GreaterThanThreshold",
            "Threshold": 100.0,
        },
    }


@pytest.fixture
def handler(monkeypatch, telegram):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("ADMIN_CHAT_ID", str(ADMIN_CHAT))
    monkeypatch.delenv("SOMMELIER_SECRETS_ARN", raising=False)
    spec = importlib.util.spec_from_file_location("alarm_notify_app", ROOT / "functions/alarm_notify/app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


class Context:
    function_name = "sommelier-alarm-notify"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-alarm-notify"
    aws_request_id = "3f1f9a52-6c1e-4b7e-9a40-000000000044"


def told(telegram) -> list[str]:
    return [c.params["text"] for c in telegram.sent_messages(ADMIN_CHAT)]


def test_a_cloudwatch_alarm_reaches_the_admin_chat_in_russian_with_what_to_do(handler, telegram):
    result = handler(sns_event(cloudwatch("sommelier-LLMBudgetAlarm-1AB2C3")), Context())
    assert result == {"alarms": 1, "told": 1}
    [text] = told(telegram)
    assert text.startswith("⚠️ Тревога: при сегодняшних расходах месячный бюджет LLM будет превышен.")
    assert "Что сделать:" in text and "MonthlyLLMBudgetUSD" in text and "2026-12-02 04:05 UTC" in text
    assert "Threshold Crossed" not in text  # CloudWatch's English stays out of the owner's chat


def test_recovery_an_unknown_alarm_and_a_stray_message(handler, telegram):
    event = sns_event(
        cloudwatch("sommelier-WebhookUnsetAlarm-9ZZ", state="OK", old="ALARM"),
        cloudwatch("someone-elses-alarm"),
        "not a CloudWatch notification",
    )
    assert handler(event, Context()) == {"alarms": 2, "told": 2}
    recovered, unknown = told(telegram)
    assert recovered.startswith("✅ Снова в порядке: Telegram больше не присылает боту сообщения")
    assert unknown.startswith("⚠️ Тревога: сработал сигнал мониторинга.") and "someone-elses-alarm" in unknown


def test_every_alarm_of_the_template_has_russian_advice_and_the_function_is_subscribed():
    import cfnlint.decode as cfnlint_decode
    from sommelier.shop.alarms import ADVICE

    template, _ = cfnlint_decode.decode(str(ROOT / "template.yaml"))
    resources = template["Resources"]
    alarms = {name for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert alarms == set(ADVICE)
    for name in alarms:
        assert {"Ref": "AlarmTopic"} in resources[name]["Properties"]["AlarmActions"], name
    events = resources["AlarmNotifyFunction"]["Properties"]["Events"]
    assert events["Alarms"] == {"Type": "SNS", "Properties": {"Topic": {"Ref": "AlarmTopic"}}}
