"""sommelier.secrets against Secrets Manager (moto): two merged secrets, the operator's variables win,
and a rotated value reaches the environment once the cache expires."""

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
    monkeypatch.setattr(secrets, "_copied_from_secret", {})
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
    for name in VARIABLES:  # values copied by the module bypass monkeypatch
        os.environ.pop(name, None)


def _rotate(client, arn, document):
    client.put_secret_value(SecretId=arn, SecretString=json.dumps(document))
    parameters.clear_caches()  # as if the five-minute cache had expired


def test_both_secrets_are_merged_into_the_environment(aws):
    assert secrets.load_secrets_into_environment() is False  # first load: nothing to rebuild
    assert os.environ["TELEGRAM_BOT_TOKEN"] == "123:token-one"
    assert os.environ["OPENAI_API_KEY"] == "sk-one"
    assert os.environ["TELEGRAM_WEBHOOK_SECRET"] == "hook-one"
    assert "EMBEDDING_API_KEY" not in os.environ  # an empty value is no value


def test_a_rotated_key_replaces_the_copied_value_and_reports_the_change(aws):
    client, bot, _ = aws
    secrets.load_secrets_into_environment()
    assert secrets.load_secrets_into_environment() is False
    _rotate(client, bot, {"telegram_bot_token": "123:token-one", "openai_api_key": "sk-two"})
    assert secrets.load_secrets_into_environment() is True
    assert os.environ["OPENAI_API_KEY"] == "sk-two"


def test_the_webhook_check_sees_a_new_secret_token_without_a_cold_start(aws):
    client, _, hook = aws
    secrets.load_secrets_into_environment()
    assert secrets.secret("TELEGRAM_WEBHOOK_SECRET") == "hook-one"
    _rotate(client, hook, {"telegram_webhook_secret": "hook-two"})
    assert secrets.secret("TELEGRAM_WEBHOOK_SECRET") == "hook-two"


def test_the_operators_own_variable_wins_and_is_never_overwritten(aws, monkeypatch):
    client, bot, _ = aws
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")
    secrets.load_secrets_into_environment()
    _rotate(client, bot, {"telegram_bot_token": "123:token-one", "openai_api_key": "sk-two"})
    assert secrets.load_secrets_into_environment() is False
    assert os.environ["OPENAI_API_KEY"] == "sk-operator"
    assert secrets.secret("OPENAI_API_KEY") == "sk-operator"


def test_a_key_removed_from_the_secret_leaves_the_environment(aws):
    client, bot, _ = aws
    secrets.load_secrets_into_environment()
    _rotate(client, bot, {"telegram_bot_token": "123:token-one"})
    assert secrets.load_secrets_into_environment() is True
    assert "OPENAI_API_KEY" not in os.environ


def test_without_secret_arns_only_the_environment_counts(monkeypatch):
    for name in secrets.SECRET_ARN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "local")
    assert secrets.load_secrets_into_environment() is False
    assert secrets.secret("TELEGRAM_WEBHOOK_SECRET") == "local"
