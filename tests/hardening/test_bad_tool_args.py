"""Bad input to the tool function: random JSON arguments for both LLM tools and every data operation.

The contract (docs/architecture.md): every call answers a JSON object ({"error": ...} for bad input), never
raises. Checked here for every name in `tools.handler.KNOWN` with hypothesis (a recursive JSON
strategy, nasty values, and plausible ones such as real wine ids and 1536-number vectors), through
`handle` and through the Lambda handler of functions/wine_tools. Read tools must leave the database
exactly as it was: a checksum of every table before and after each call.
"""

from __future__ import annotations

import importlib.util
import json
import math
import uuid
from pathlib import Path

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from sommelier.embeddings.local import LOCAL_MODEL_NAME
from sommelier.settings import EMBEDDING_DIMENSIONS
from sommelier.toolfn.handler import KNOWN, handle

from tests.hardening.support import HARDENING, json_strategies, record_figure

OPERATIONS = KNOWN  # every operation, and the run_tools batch

ROOT = Path(__file__).resolve().parents[2]
READ_ONLY = {
    "search_wines",
    "semantic_search",
    "get_wines",
    "get_list",
    "load_history",
    "catalog_stats",
    "export_wines",
    "list_wines",
    "embedding_texts",
    "get_age_answer",
    "find_wines",
    "wine_card",
    "report_data",
    "admin_stats",
    "get_shop_facts",
    "run_tools",
}
KEYS = {
    "get_shop_facts": [],
    "put_shop_facts": ["facts"],
    "search_wines": [
        "wine_type",
        "sweetness",
        "grape_variety",
        "price_min",
        "price_max",
        "country",
        "region",
        "food_pairing",
        "limit",
        "exclude_ids",
    ],
    "semantic_search": ["query", "wine_type", "price_max", "embedding", "embedding_model", "limit", "exclude_ids"],
    "get_wines": ["ids"],
    "get_list": ["limit", "wine_type", "price_max", "exclude_ids"],
    "load_history": ["chat_id", "limit"],
    "save_turn": [
        "chat_id",
        "user_id",
        "update_id",
        "user_text",
        "answer_text",
        "wine_ids",
        "response_type",
        "stats",
        "taste",
    ],
    "reset_history": ["chat_id"],
    "move_chat": ["from_chat_id", "to_chat_id"],
    "upsert_user": ["telegram_user_id", "chat_id", "username", "first_name", "last_name", "language_code", "profile"],
    "set_user_active": ["telegram_user_id", "chat_id", "active"],
    "chat_state": ["telegram_user_id"],
    "cache_photo": ["wine_id", "file_id"],
    "save_feedback": ["chat_id", "user_id", "message_id", "rating", "wine_id"],
    "catalog_stats": [],
    "export_wines": [],
    "list_wines": ["limit"],
    "import_wines": ["wines"],
    "update_embeddings": ["items", "embedding_model"],
    "embedding_texts": [],
    "get_age_answer": ["telegram_user_id"],
    "save_age_answer": ["telegram_user_id", "is_adult"],
    "forget_user": ["telegram_user_id"],
    "taste_profile": ["telegram_user_id"],
    "purge_old_messages": ["days"],
    "find_wines": ["refs"],
    "wine_card": ["ref"],
    "report_data": ["since", "until"],
    "admin_stats": [],
    "begin_turn": ["chat_id", "history_limit", "user"],
    "open_turn": ["chat_id", "history_limit", "user", "calls"],
    "end_turn": ["turn", "wine_ids", "photos"],
    "run_tools": ["calls"],
}
TABLES = ("wines", "users", "messages", "feedback", "age_answers", "turn_stats", "taste_profiles", "schema_migrations")
CATALOG = json.loads((ROOT / "data" / "catalog" / "wines.json").read_text("utf-8"))["wines"]


def test_every_operation_is_fuzzed():
    assert set(KEYS) == set(OPERATIONS), "add the new operation's argument names to KEYS"
    assert READ_ONLY <= set(OPERATIONS)


# ------------------------------------------------------------------ strategies
json_scalars, json_values = json_strategies(max_text=30, max_key=10, max_leaves=12)
nasty = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        1,
        2**31,
        2**53,
        2**63,
        -(2**63),
        1e308,
        -0.0,
        float("nan"),
        float("inf"),
        "",
        " ",
        "\x00",
        "a\x00b",
        "%",
        "_",
        "\\",
        "' OR 1=1; DROP TABLE wines; --",
        "red",
        "RED",
        "красное",
        "semi-dry",
        "Мальбек",
        "стейк",
        "США",
        "x" * 201,
        "я" * 1001,
        "🍷" * 300,
        "1 500 ₽",
        "2,5",
        [],
        {},
        [None],
        ["red"],
        [str(uuid.uuid4())],
        ["not-a-uuid"],
        [str(uuid.UUID(int=0))] * 201,
        {"$gt": ""},
        {"__proto__": {}},
    ]
)
plausible_ids = st.lists(st.uuids().map(str), max_size=5)
vectors = st.one_of(
    st.integers(min_value=0, max_value=2**32).map(
        lambda seed: [math.sin(seed + i) for i in range(EMBEDDING_DIMENSIONS)]
    ),
    st.just([0.0] * EMBEDDING_DIMENSIONS),
    st.just([float("nan")] * EMBEDDING_DIMENSIONS),
    st.just([1.0] * (EMBEDDING_DIMENSIONS + 1)),
    st.just([True] * EMBEDDING_DIMENSIONS),
)


@st.composite
def import_rows(draw):
    row = {k: (v if v is not None else "") for k, v in draw(st.sampled_from(CATALOG)).items() if k != "image"}
    for key in draw(st.lists(st.sampled_from(sorted(row)), max_size=3, unique=True)):
        row[key] = draw(json_scalars | nasty)
    if draw(st.booleans()):
        row["name"] = f"Fuzz {draw(st.integers(min_value=0, max_value=10**6))}"  # a new wine, not an update
    return row


texts = st.one_of(
    st.text(max_size=40),
    st.text(min_size=150, max_size=260),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "a\x00b",
            "\u202eRTL\u202c",
            "🍷" * 600,
            "x" * 2000,
            "x" * 2001,
            "<b>",
            "%_\\",
            "' OR 1=1; --",
            "красное",
            "Мальбек",
            "стейк",
            "Тоскана",
            "США",
            "ru",
            "en-US",
        ]
    ),
)
telegram_ids = st.one_of(
    st.integers(min_value=-(2**53) - 2, max_value=2**53 + 2),
    st.sampled_from([0, 1, -1, 7700001, -1001234567890, 2**53 - 1, 2**53]),
)
TYPED = {
    **{
        k: texts
        for k in (
            "user_text",
            "answer_text",
            "username",
            "first_name",
            "last_name",
            "language_code",
            "file_id",
            "query",
            "grape_variety",
            "country",
            "region",
            "food_pairing",
        )
    },
    **{k: telegram_ids for k in ("chat_id", "user_id", "update_id", "telegram_user_id", "message_id")},
    "rating": st.sampled_from([-1, 1, 0, 2, -2, True]),
    "active": st.booleans(),
    "limit": st.integers(min_value=-5, max_value=10**6),
    "price_min": st.floats(allow_nan=True, allow_infinity=True) | st.integers(min_value=-10, max_value=10**12),
    "price_max": st.floats(allow_nan=True, allow_infinity=True) | st.integers(min_value=-10, max_value=10**12),
    "wine_type": st.sampled_from(["red", "white", "rose", "sparkling", "orange", "RED", "красное", ""]),
    "sweetness": st.sampled_from(["dry", "semi_dry", "semi-sweet", "sweet", "brut", "очень"]),
    "response_type": st.sampled_from(["recommendation", "informational", "off_topic", "other", None]),
}


def value_for(key: str):
    typed = TYPED.get(key)
    if typed is not None:
        return typed | typed | json_values | nasty
    extra = {
        "ids": plausible_ids,
        "exclude_ids": plausible_ids,
        "wine_ids": plausible_ids,
        "wine_id": st.uuids().map(str),
        "embedding": vectors,
        "embedding_model": st.sampled_from([LOCAL_MODEL_NAME, "text-embedding-3-small", ""]),
        "wines": st.lists(import_rows() | json_values, max_size=3),
        "items": st.lists(
            st.fixed_dictionaries({"id": st.uuids().map(str), "embedding": vectors}) | json_values, max_size=2
        ),
        "profile": st.dictionaries(st.text(max_size=8), json_scalars, max_size=3),
        "history_limit": TYPED["limit"],
        "user": st.fixed_dictionaries({"telegram_user_id": TYPED["chat_id"], "chat_id": TYPED["chat_id"]}),
        "turn": st.fixed_dictionaries(
            {"chat_id": TYPED["chat_id"], "user_text": TYPED["user_text"], "answer_text": TYPED["answer_text"]}
        ),
        "photos": st.lists(
            st.fixed_dictionaries({"wine_id": st.uuids().map(str), "file_id": TYPED["file_id"]}) | json_values,
            max_size=3,
        ),
        "calls": st.lists(
            st.fixed_dictionaries(
                {"tool": st.sampled_from(["search_wines", "semantic_search", "get_list"]), "arguments": json_values}
            )
            | json_values,
            max_size=10,
        ),
    }.get(key)
    base = json_values | nasty
    return base | extra if extra is not None else base


def plausible(name: str, ids: list[str]) -> dict:
    """A valid call of each operation: the starting point that mutations then break one key at a time."""
    vector = [math.cos(i) for i in range(EMBEDDING_DIMENSIONS)]
    row = {k: (v if v is not None else "") for k, v in CATALOG[0].items() if k != "image"}
    return {
        "search_wines": {"wine_type": "red", "sweetness": "dry", "food_pairing": "стейк", "price_max": 3000},
        "semantic_search": {
            "query": "лёгкое белое на лето",
            "embedding": vector,
            "embedding_model": LOCAL_MODEL_NAME,
            "wine_type": "white",
        },
        "get_wines": {"ids": ids[:3]},
        "get_list": {"limit": 5, "wine_type": "red"},
        "load_history": {"chat_id": 7700001, "limit": 10},
        "save_turn": {
            "chat_id": 7700001,
            "user_id": 7700001,
            "update_id": 1,
            "user_text": "привет",
            "answer_text": "Здравствуйте!\n\nЧем помочь?",
            "wine_ids": ids[:1],
            "response_type": "recommendation",
            "stats": {"mode": "llm", "llm_calls": 2, "prompt_tokens": 900, "completion_tokens": 120},
        },
        "reset_history": {"chat_id": 7700001},
        "move_chat": {"from_chat_id": -4077001, "to_chat_id": -1004077001},
        "upsert_user": {
            "telegram_user_id": 7700001,
            "chat_id": 7700001,
            "username": "anna",
            "first_name": "Анна",
            "last_name": None,
            "language_code": "ru",
            "profile": {"любит": "красное"},
        },
        "set_user_active": {"chat_id": 7700001, "active": False},
        "chat_state": {"telegram_user_id": 7700001},
        "cache_photo": {"wine_id": ids[0], "file_id": "AgACAgIAAxkBAAIB"},
        "save_feedback": {"chat_id": 7700001, "user_id": 7700001, "message_id": 1, "rating": 1, "wine_id": ids[0]},
        "catalog_stats": {},
        "export_wines": {},
        "list_wines": {"limit": 10},
        "import_wines": {"wines": [row]},
        "update_embeddings": {"items": [{"id": ids[0], "embedding": vector}], "embedding_model": LOCAL_MODEL_NAME},
        "embedding_texts": {},
        "get_age_answer": {"telegram_user_id": 7700001},
        "save_age_answer": {"telegram_user_id": 7700001, "is_adult": True},
        "forget_user": {"telegram_user_id": 7700001},
        "taste_profile": {"telegram_user_id": 7700001},
        "purge_old_messages": {"days": 180},
        "find_wines": {"refs": ids[:2]},
        "wine_card": {"ref": ids[0]},
        "report_data": {"since": "2026-01-05T00:00:00+00:00", "until": "2026-01-12T00:00:00+00:00"},
        "admin_stats": {},
        "get_shop_facts": {},
        "put_shop_facts": {"facts": {"name": "Лоза", "stores": []}},
        "begin_turn": {
            "chat_id": 7700001,
            "history_limit": 10,
            "user": {"telegram_user_id": 7700001, "chat_id": 7700001, "first_name": "Анна"},
        },
        "open_turn": {
            "chat_id": 7700001,
            "history_limit": 10,
            "user": {"telegram_user_id": 7700001, "chat_id": 7700001, "first_name": "Анна"},
            "calls": [{"tool": "search_wines", "arguments": {"wine_type": "red"}}],
        },
        "end_turn": {
            "turn": {
                "chat_id": 7700001,
                "update_id": 2,
                "user_text": "ещё",
                "answer_text": "Вот.",
                "wine_ids": ids[:1],
            },
            "wine_ids": ids[:2],
            "photos": [{"wine_id": ids[0], "file_id": "AgACAgIAAxkBAAIC"}],
        },
        "run_tools": {
            "calls": [
                {"tool": "search_wines", "arguments": {"wine_type": "red"}},
                {"tool": "search_wines", "arguments": {"food_pairing": "рыба"}},
            ]
        },
    }[name]


def arguments_for(name: str, ids: list[str]):
    keys = KEYS[name]
    shaped = st.fixed_dictionaries({}, optional={k: value_for(k) for k in keys})
    with_extra = st.builds(
        lambda d, extra: {**extra, **d}, shaped, st.dictionaries(st.text(max_size=8), json_scalars, max_size=2)
    )
    as_string = shaped.map(lambda d: json.dumps(d, ensure_ascii=False))  # LLMs send arguments as a JSON string

    @st.composite
    def broken_one_key_at_a_time(draw):
        args = json.loads(json.dumps(plausible(name, ids)))
        count = draw(st.sampled_from([0, 1, 1, 1, 2]))
        for key in draw(
            st.lists(st.sampled_from(keys or ["unknown"]), min_size=count, max_size=count, unique=True)
            if len(keys or ["unknown"]) >= count
            else st.just([])
        ):
            if draw(st.integers(min_value=0, max_value=4)) == 0:
                args.pop(key, None)
            else:
                args[key] = draw(value_for(key))
        return args

    mutated = broken_one_key_at_a_time()
    return st.one_of(mutated, mutated, mutated, shaped, with_extra, as_string, json_values)


def _wine_ids(database) -> list[str]:
    with database.connection() as conn:
        return [str(r[0]) for r in conn.execute("SELECT id FROM wines ORDER BY name LIMIT 5").fetchall()]


# ------------------------------------------------------------------ checks
def checksums(database) -> dict[str, str]:
    with database.connection() as conn:
        return {
            table: conn.execute(
                f"SELECT count(*) || ':' || coalesce(md5(string_agg(md5(t::text), '' ORDER BY md5(t::text))), '') "  # nosec B608 - table names are constants
                f"FROM {table} t"
            ).fetchone()[0]
            for table in TABLES
        }


def assert_json_object(result) -> None:
    assert isinstance(result, dict), result
    json.dumps(result, allow_nan=False)  # strict JSON: what the Lambda runtime returns must parse anywhere
    if "error" in result:
        assert isinstance(result["error"], str) and result["error"], result
        assert "Traceback" not in result["error"]


_outcomes: dict[str, dict[str, int]] = {}


def _count(name: str, result: dict) -> None:
    bucket = _outcomes.setdefault(name, {"ok": 0, "error": 0})
    bucket["error" if "error" in result else "ok"] += 1
    record_figure("bad_input.tool_args.outcomes", _outcomes)


@pytest.mark.parametrize("name", sorted(READ_ONLY))
def test_read_tools_answer_json_and_change_nothing(name, fresh_db):
    before = checksums(fresh_db)

    @settings(HARDENING, max_examples=40)
    @given(arguments=arguments_for(name, _wine_ids(fresh_db)))
    def run(arguments):
        note(json.dumps(arguments, ensure_ascii=False, default=str)[:400])
        result = handle({"tool": name, "arguments": arguments}, fresh_db)
        assert_json_object(result)
        _count(name, result)
        assert checksums(fresh_db) == before, f"{name} changed the database"

    run()


@pytest.mark.parametrize("name", sorted(set(OPERATIONS) - READ_ONLY))
def test_write_operations_answer_json(name, fresh_db):
    @settings(HARDENING, max_examples=40)
    @given(arguments=arguments_for(name, _wine_ids(fresh_db)))
    def run(arguments):
        note(json.dumps(arguments, ensure_ascii=False, default=str)[:400])
        result = handle({"tool": name, "arguments": arguments}, fresh_db)
        assert_json_object(result)
        _count(name, result)

    run()
    # whatever was written still satisfies every constraint, and the tools still work on it
    assert "error" not in handle({"tool": "search_wines", "arguments": {}}, fresh_db)
    assert "error" not in handle({"tool": "catalog_stats", "arguments": {}}, fresh_db)


@settings(HARDENING, max_examples=80)
@given(
    event=json_values
    | st.fixed_dictionaries(
        {"tool": st.sampled_from(sorted(OPERATIONS)) | st.text(max_size=20), "arguments": json_values}
    )
)
def test_random_events(catalog_db, event):
    assert_json_object(handle(event, catalog_db))


DEEP = "[" * 100_000 + "]" * 100_000
HAND_WRITTEN_EVENTS = [
    "not json",
    "",
    "[]",
    "null",
    '{"tool": 5}',
    '{"tool": "drop_tables"}',
    '{"tool": "search_wines", "arguments": 5}',
    '{"tool": "search_wines", "arguments": "not json"}',
    '{"tool": "search_wines", "arguments": "' + "[" * 50_000 + '"}',
    json.dumps({"tool": "search_wines", "arguments": DEEP}),
    '{"tool": "search_wines", "arguments": ' + DEEP + "}",
    b'{"tool": "search_wines", "arguments": {"country": "\xff"}}',
    {"tool": "get_wines", "arguments": {"ids": DEEP}},
    {"tool": "semantic_search", "arguments": {"query": "вино", "embedding": "[1, 2]", "embedding_model": "m"}},
    {"tool": "search_wines", "arguments": {"limit": float("nan")}},
    {"tool": "search_wines", "arguments": {"limit": 10**400}},
]


@pytest.mark.parametrize("event", HAND_WRITTEN_EVENTS, ids=range(len(HAND_WRITTEN_EVENTS)))
def test_hand_written_events(catalog_db, event):
    assert_json_object(handle(event, catalog_db))


def test_lambda_handler_of_the_tool_function(catalog_db, monkeypatch):
    """The deployed entry point: functions/wine_tools/app.py, with its Powertools logger."""
    monkeypatch.setenv("DATABASE_URL", catalog_db.conninfo)

    spec = importlib.util.spec_from_file_location("wine_tools_app_hardening", ROOT / "functions/wine_tools/app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)

    class Context:
        function_name, memory_limit_in_mb, aws_request_id = "tools", 512, "req-1"
        invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:tools"

    for event in (
        None,
        [],
        "x",
        {"tool": None},
        {"tool": "search_wines", "arguments": {"price_max": "дёшево"}},
        {"tool": "get_wines", "arguments": {"ids": ["x"]}},
        {"tool": "search_wines", "arguments": {}},
    ):
        assert_json_object(app.handler(event, Context()))
