"""The tool function's Lambda handler (functions/wine_tools/app.py), loaded by path and called like Lambda does."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

APP_PATH = Path(__file__).resolve().parents[2] / "functions" / "wine_tools" / "app.py"


@dataclass
class FakeLambdaContext:
    function_name: str = "sommelier-wine-tools"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-wine-tools"
    aws_request_id: str = "3f1f9a52-6c1e-4b7e-9a40-000000000001"


@pytest.fixture
def app(monkeypatch, catalog_db):
    monkeypatch.setenv("DATABASE_URL", catalog_db.conninfo)
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sommelier-tools")
    spec = importlib.util.spec_from_file_location("wine_tools_app_under_test", APP_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    module.tools.database.close()


def invoke(app, event):
    result = app.handler(event, FakeLambdaContext())
    assert isinstance(result, dict)
    json.dumps(result)  # what Lambda serialises back to the caller
    return result


def test_search_wines_through_the_lambda_handler(app, catalog_db):
    event = {"tool": "search_wines", "arguments": {"wine_type": "red", "food_pairing": "к стейку", "limit": 3}}
    result = invoke(app, event)
    assert result["found"] == 3 and result["filters_applied"] == {"wine_type": "red", "food_pairing": "к стейку"}
    from sommelier.toolfn.handler import handle

    assert result == handle(event, catalog_db)


def test_the_database_comes_from_database_url(app, catalog_db):
    invoke(app, {"tool": "catalog_stats", "arguments": {}})
    assert app.tools.database.conninfo == catalog_db.conninfo


def test_semantic_search_through_the_lambda_handler(app):
    from sommelier.embeddings.local import LOCAL_MODEL_NAME, LocalHashingEmbeddings

    vector = LocalHashingEmbeddings().embed(["игристое отметить повышение"])[0]
    result = invoke(
        app,
        {
            "tool": "semantic_search",
            "arguments": {
                "query": "игристое отметить повышение",
                "embedding": vector,
                "embedding_model": LOCAL_MODEL_NAME,
                "wine_type": "sparkling",
            },
        },
    )
    assert result["found"] == 5 and all(w["wine_type"] == "sparkling" for w in result["wines"])


def test_arguments_as_a_json_string_like_the_llm_sends(app):
    result = invoke(app, {"tool": "search_wines", "arguments": json.dumps({"country": "Италия", "limit": 2})})
    assert result["found"] == 2 and result["filters_applied"] == {"country": "Италия"}


@pytest.mark.parametrize(
    "event",
    [
        {"tool": "drop_everything", "arguments": {}},
        {"tool": "search_wines", "arguments": [1, 2]},
        {"tool": "search_wines", "arguments": {"price_max": "дёшево"}},
        {"tool": "semantic_search", "arguments": {"query": "x"}},
        {"arguments": {}},
        {},
        [],
        "not json at all",
        None,
    ],
)
def test_bad_events_answer_an_error_and_never_raise(app, event):
    result = invoke(app, event)
    assert set(result) <= {"error", "not_found"} and result["error"]  # not_found: an unknown tool


def test_a_json_string_event_is_accepted(app):
    result = invoke(app, json.dumps({"tool": "catalog_stats", "arguments": {}}))
    assert result["wines"] > 0


def test_unreachable_database_is_a_retryable_error(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody:secret@127.0.0.1:9/none?connect_timeout=1")
    monkeypatch.setenv("DATABASE_CONNECT_TIMEOUT_S", "1")
    spec = importlib.util.spec_from_file_location("wine_tools_app_unreachable", APP_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        result = module.handler({"tool": "catalog_stats", "arguments": {}}, FakeLambdaContext())
    finally:
        module.tools.database.close()
    assert result.get("retryable") is True and "error" in result
    assert "secret" not in json.dumps(result)  # credentials never leak into the answer
