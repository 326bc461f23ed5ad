"""/report in AWS starts the report function asynchronously (botocore's Stubber checks the call against the
Lambda API model); a failure is a short reason for the admin, never a trace."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber
from sommelier.settings import load_settings
from sommelier.shop import report_delivery


@pytest.fixture
def lambda_client(monkeypatch):
    client = boto3.client("lambda", region_name="eu-central-1", aws_access_key_id="x", aws_secret_access_key="x")
    monkeypatch.setattr(boto3, "client", lambda service, *args, **kwargs: client)
    monkeypatch.setenv("REPORT_FUNCTION_NAME", "sommelier-weekly-report")
    with Stubber(client) as stubber:
        yield stubber


def test_report_is_started_asynchronously(lambda_client):
    lambda_client.add_response(
        "invoke",
        {"StatusCode": 202},
        {
            "FunctionName": "sommelier-weekly-report",
            "InvocationType": "Event",
            "Payload": json.dumps({"chat_id": -100777}).encode(),
        },
    )
    assert report_delivery.request_report(load_settings(), -100777, shop=None) == report_delivery.STARTED
    lambda_client.assert_no_pending_responses()


def test_a_failed_start_is_told_in_one_line(lambda_client):
    lambda_client.add_client_error("invoke", service_error_code="ResourceNotFoundException", service_message="no fn")
    answer = report_delivery.request_report(load_settings(), -100777, shop=None)
    assert answer.startswith("Не получилось собрать отчёт") and "Traceback" not in answer and "\n" not in answer
