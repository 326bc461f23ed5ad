"""`sommelier tool NAME 'JSON'` (docs/architecture.md), run as a real subprocess against the test database."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from sommelier.embeddings.local import LOCAL_MODEL_NAME, LocalHashingEmbeddings
from sommelier.toolfn.handler import handle

CLI = [sys.executable, "-m", "sommelier_dev.cli.main"]
PROVIDER_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EMBEDDING_PROVIDER",
    "EMBEDDING_MODEL",
    "EMBEDDING_API_KEY",
    "EMBEDDING_BASE_URL",
    "TOOL_FUNCTION_NAME",
)


@pytest.fixture(scope="module")
def cli(catalog_db, tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    env.update(
        DATABASE_URL=catalog_db.conninfo,
        SOMMELIER_STATE_DIR=str(tmp_path_factory.mktemp("cli-state")),
        PYTHONIOENCODING="utf-8",
    )

    def run(*args: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*CLI, *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            env={**env, **(extra_env or {})},
        )

    return run


def test_search_wines_prints_the_handlers_json(cli, catalog_db):
    arguments = {"wine_type": "red", "country": "Штаты", "price_max": 5000, "limit": 10}
    done = cli("tool", "search_wines", json.dumps(arguments, ensure_ascii=False))
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == handle({"tool": "search_wines", "arguments": arguments}, catalog_db)
    assert printed["filters_applied"] == {"wine_type": "red", "country": "США", "price_max": 5000}
    assert printed["found"] > 0 and all(w["region"].endswith("США") for w in printed["wines"])
    assert '"country": "США"' in " ".join(done.stdout.split())  # UTF-8 text, not \\u escapes


def test_semantic_search_from_the_cli_embeds_the_query(cli, catalog_db):
    done = cli("tool", "semantic_search", '{"query": "лёгкое освежающее на летний вечер", "wine_type": "white"}')
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert "error" not in printed, printed
    vector = LocalHashingEmbeddings().embed(["лёгкое освежающее на летний вечер"])[0]
    expected = handle(
        {
            "tool": "semantic_search",
            "arguments": {
                "query": "лёгкое освежающее на летний вечер",
                "wine_type": "white",
                "embedding": vector,
                "embedding_model": LOCAL_MODEL_NAME,
            },
        },
        catalog_db,
    )
    assert printed == expected
    assert printed["found"] == 5 and all(w["wine_type"] == "white" for w in printed["wines"])
    assert all(0 <= w["similarity_score"] <= 1 for w in printed["wines"])


def test_semantic_search_from_the_cli_with_another_model_is_refused(cli):
    done = cli("tool", "semantic_search", '{"query": "лёгкое"}', extra_env={"EMBEDDING_MODEL": "my-other-model"})
    assert done.returncode == 0
    printed = json.loads(done.stdout)
    assert "my-other-model" in printed["error"] and LOCAL_MODEL_NAME in printed["error"]


@pytest.mark.parametrize("arguments", ["{bad", "{'wine_type': 'red'}", ""])
def test_bad_json_exits_with_code_2(cli, arguments):
    done = cli("tool", "search_wines", arguments)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "not valid JSON" in " ".join(done.stderr.split())


def test_errors_from_the_tool_are_printed_as_json(cli):
    for args, fragment in (
        (("tool", "no_such_tool"), "unknown tool"),
        (("tool", "search_wines", "[1, 2]"), "object"),
        (("tool", "search_wines", '{"price_max": "дёшево"}'), "price_max"),
        (("tool", "semantic_search", "{}"), "query"),
    ):
        done = cli(*args)
        assert done.returncode == 0, done.stderr
        assert fragment in json.loads(done.stdout)["error"]


def test_default_arguments_and_data_operations(cli, shipped_wines):
    done = cli("tool", "catalog_stats")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["wines"] == stats["available"] == len(shipped_wines)
    assert stats["embedding_models"] == {LOCAL_MODEL_NAME: len(shipped_wines)}
    listed = json.loads(cli("tool", "get_list", '{"limit": 4}').stdout)
    assert listed["found"] == 4 and len({w["wine_type"] for w in listed["wines"]}) == 4


def test_missing_tool_name_is_a_usage_error(cli):
    done = cli("tool")
    assert done.returncode == 2
    assert "usage" in done.stderr.lower()


def test_chat_once_json_reports_the_tool_function_calls(cli):
    done = cli("chat", "--once", "красное сухое к стейку до 3000", "--json", extra_env={"EMBEDDING_PROVIDER": "local"})
    assert done.returncode == 0, done.stderr
    metadata = json.loads(done.stdout)["metadata"]
    # begin_turn, the offline responder's searches, end_turn: counted per tool-function operation
    assert isinstance(metadata["tool_function_calls"], int) and metadata["tool_function_calls"] >= 2, metadata


def test_successive_chat_once_calls_continue_one_conversation(cli, catalog_db):
    """Each `chat --once` is a new update: every turn is kept, and a follow-up builds on the one before it."""
    local = {"EMBEDDING_PROVIDER": "local"}
    turns = ["красное сухое до 3000", "а белое?", "а подешевле?"]
    replies = [cli("chat", "--once", text, "--json", "--chat-id", "5151", extra_env=local) for text in turns]
    assert all(done.returncode == 0 for done in replies), [done.stderr for done in replies]
    with catalog_db.connection() as conn:
        saved = conn.execute(
            "SELECT content FROM messages WHERE chat_id = 5151 AND role = 'user' ORDER BY id"
        ).fetchall()
    assert [row[0] for row in saved] == turns
    last = json.loads(replies[-1].stdout)
    assert last["metadata"]["conversation_turn"] == 3
    described = " ".join(w["description"] for w in last["response"]["wines"]).lower()
    assert described and "белое" in described and "красное" not in described, "«а подешевле?» kept the white"
