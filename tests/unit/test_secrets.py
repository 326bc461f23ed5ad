"""sommelier.secrets against Secrets Manager (moto): two merged secrets go into the settings (never into
os.environ), the operator's variables win, and a rotated value is picked up once the cache expires."""

from __future__ import annotations

import json
import os

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters
from moto import mock_aws
from sommelier import secrets

VARIABLES = ("TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "OPENAI_API_KEY", "EMBEDDING_API_KEY")


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    for name in (*VARIABLES, *secrets.SECRET_ARN_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    parameters.clear_caches()
    with mock_aws():
        client = boto3.client("secretsmanager")
        bot = client.create_secret(
            Name="bot",
            SecretString=json.dumps(
                {"telegram_bot_token": "123:token-one", "openai_api_key": "sk-one", "embedding_api_key": ""}
            ),
        )["ARN"]
        hook = client.create_secret(Name="hook", SecretString=json.dumps({"telegram_webhook_secret": "hook-one"}))[
            "ARN"
        ]
        monkeypatch.setenv("SOMMELIER_SECRETS_ARN", bot)
        monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET_ARN", hook)
        yield client, bot, hook
    parameters.clear_caches()


def _rotate(client, arn, document):
    client.put_secret_value(SecretId=arn, SecretString=json.dumps(document))
    parameters.clear_caches()  # as if the five-minute cache had expired


def test_both_secrets_are_merged_into_the_settings_not_the_environment(aws):
    settings, changed = secrets.SettingsSource().current()
    assert changed is False  # first read: nothing to rebuild
    assert settings.telegram.bot_token == "123:token-one"
    assert settings.llm.api_key == "sk-one"
    assert settings.telegram.webhook_secret == "hook-one"
    assert settings.embeddings.api_key == "sk-one", "an empty value is no value: the LLM key stands in"
    assert not any(os.environ.get(name) for name in VARIABLES), "secrets never reach os.environ"


def test_a_rotated_key_is_picked_up_and_reported_as_a_change(aws):
    client, bot, _ = aws
    source = secrets.SettingsSource()
    source.current()
    assert source.current()[1] is False
    _rotate(client, bot, {"telegram_bot_token": "123:token-one", "openai_api_key": "sk-two"})
    settings, changed = source.current()
    assert changed is True and settings.llm.api_key == "sk-two"


def test_the_webhook_sees_a_new_secret_token_without_a_cold_start(aws):
    client, _, hook = aws
    source = secrets.SettingsSource()
    assert source.current()[0].telegram.webhook_secret == "hook-one"
    _rotate(client, hook, {"telegram_webhook_secret": "hook-two"})
    assert source.current()[0].telegram.webhook_secret == "hook-two"


def test_the_operators_own_variable_wins(aws, monkeypatch):
    client, bot, _ = aws
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")
    source = secrets.SettingsSource()
    source.current()
    _rotate(client, bot, {"telegram_bot_token": "123:token-one", "openai_api_key": "sk-two"})
    settings, changed = source.current()
    assert changed is False and settings.llm.api_key == "sk-operator"


def test_a_key_removed_from_the_secret_is_gone_from_the_settings(aws):
    client, bot, _ = aws
    source = secrets.SettingsSource()
    source.current()
    _rotate(client, bot, {"telegram_bot_token": "123:token-one"})
    settings, changed = source.current()
    assert changed is True and settings.llm.api_key is None and settings.offline


def test_without_secret_arns_only_the_environment_counts():
    settings, changed = secrets.SettingsSource({"TELEGRAM_WEBHOOK_SECRET": "local"}).current()
    assert changed is False and settings.telegram.webhook_secret == "local"


def test_a_secret_value_is_masked_in_log_lines(aws):
    from sommelier.observability.redaction import redact

    secrets.SettingsSource().current()
    assert "hook-one" not in redact("the header was hook-one-but-longer") or len("hook-one") < 8
    assert "123:token-one" not in redact("token 123:token-one in a line")


def test_the_token_and_the_model_keys_come_from_separate_secrets(aws, monkeypatch):
    """The deployed split (template.yaml): the bot token alone in one secret, the LLM and embedding keys in
    another; a function given only the token's secret never sees the keys."""
    client, _, _ = aws
    token_only = client.create_secret(Name="token", SecretString=json.dumps({"telegram_bot_token": "9:token"}))["ARN"]
    keys = client.create_secret(
        Name="keys", SecretString=json.dumps({"openai_api_key": "sk-llm", "embedding_api_key": "sk-emb"})
    )["ARN"]
    monkeypatch.setenv("SOMMELIER_SECRETS_ARN", token_only)
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET_ARN")
    settings = secrets.SettingsSource().settings
    assert (settings.telegram.bot_token, settings.llm.api_key, settings.embeddings.api_key) == ("9:token", None, None)
    monkeypatch.setenv("MODEL_KEYS_SECRET_ARN", keys)
    parameters.clear_caches()
    settings = secrets.SettingsSource().settings
    assert (settings.telegram.bot_token, settings.llm.api_key, settings.embeddings.api_key) == (
        "9:token",
        "sk-llm",
        "sk-emb",
    )
