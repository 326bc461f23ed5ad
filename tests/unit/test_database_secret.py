"""The tool function's database URL from its Secrets Manager secret (moto), and the switch to new
credentials after a connection failure when the password in the secret has changed."""

from __future__ import annotations

import json

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters
from moto import mock_aws
from sommelier.db.pool import Database
from sommelier.db.url import resolve_database_url as resolve_for
from sommelier.settings import load_settings
from sommelier.toolfn.handler import handle


def resolve_database_url(**options):
    return resolve_for(load_settings(), **options)  # the settings of an entry point started now


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    # Nothing listens on port 9 of loopback: every connection is refused at once.
    monkeypatch.setenv("DATABASE_HOST", "127.0.0.1")
    monkeypatch.setenv("DATABASE_PORT", "9")
    monkeypatch.setenv("DATABASE_NAME", "sommelier")
    monkeypatch.setenv("DATABASE_CONNECT_TIMEOUT_S", "1")
    monkeypatch.setenv("DATABASE_SSLMODE", "require")  # no RDS CA bundle outside a built layer
    parameters.clear_caches()
    with mock_aws():
        client = boto3.client("secretsmanager")
        arn = client.create_secret(
            Name="app-db", SecretString=json.dumps({"username": "sommelier_app_user", "password": "first-password"})
        )["ARN"]
        monkeypatch.setenv("DATABASE_SECRET_ARN", arn)
        yield client, arn
    parameters.clear_caches()


def test_the_url_is_built_from_the_secret_and_the_host_variables(secret):
    assert resolve_database_url() == (
        "postgresql://sommelier_app_user:first-password@127.0.0.1:9/sommelier?sslmode=require"
    )


def test_verify_full_checks_the_server_against_the_rds_ca_bundle(secret, monkeypatch, tmp_path):
    from sommelier.db import url

    bundle = tmp_path / "layer python" / "rds-ca-bundle.pem"
    bundle.parent.mkdir()
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr(url, "RDS_CA_BUNDLE", bundle)
    monkeypatch.setenv("DATABASE_SSLMODE", "verify-full")
    assert resolve_database_url().endswith(
        f"/sommelier?sslmode=verify-full&sslrootcert={tmp_path}/layer%20python/rds-ca-bundle.pem"
    )
    monkeypatch.delenv("DATABASE_SSLMODE")  # verify-full is the default
    assert "sslmode=verify-full&sslrootcert=" in resolve_database_url()


def test_verify_full_without_the_bundle_is_a_clear_error(secret, monkeypatch, tmp_path):
    from sommelier.db import url

    monkeypatch.setattr(url, "RDS_CA_BUNDLE", tmp_path / "missing.pem")
    monkeypatch.setenv("DATABASE_SSLMODE", "verify-full")
    with pytest.raises(RuntimeError, match="needs the RDS CA bundle"):
        resolve_database_url()
    monkeypatch.setenv("DATABASE_SSLMODE", "sometimes")
    with pytest.raises(RuntimeError, match="DATABASE_SSLMODE must be one of"):
        resolve_database_url()


def test_a_changed_password_is_picked_up_after_a_connection_failure(secret):
    client, arn = secret
    database = Database.from_settings(load_settings())
    first_pool = database.pool
    assert "first-password" in database.conninfo
    client.put_secret_value(
        SecretId=arn, SecretString=json.dumps({"username": "sommelier_app_user", "password": "second-password"})
    )

    # Still cached: the URL is not re-read on every call.
    assert "first-password" in resolve_database_url()
    answer = handle({"tool": "catalog_stats", "arguments": {}}, database)
    assert answer["retryable"] is True  # this call fails (nothing listens) ...
    assert "second-password" in database.conninfo  # ... the next one uses the new password
    assert first_pool.closed and not database.pool.closed
    database.close()


def test_an_unchanged_secret_keeps_the_pool(secret):
    database = Database.from_settings(load_settings())
    first_pool = database.pool
    assert database.refresh() is False
    assert database.pool is first_pool
    database.close()


def test_a_database_url_is_never_refreshed(secret, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@127.0.0.1:9/x")
    database = Database.from_settings(load_settings())
    assert database.refresh() is False
    database.close()
