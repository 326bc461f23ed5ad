"""Validation of tool calls (docs/architecture.md).

Bad input never raises: the handler answers {"error": "..."} or ignores what the rules say to
ignore. Hostile strings (SQL injection, LIKE wildcards, huge or odd unicode) in every text
argument give a sane answer and leave the wines table exactly as it was.
"""

from __future__ import annotations

import json
import math

import pytest
from sommelier.embeddings.local import LOCAL_MODEL_NAME, LocalHashingEmbeddings
from sommelier.toolfn.handler import handle

DIMENSIONS = 1536
INJECTIONS = [
    "'; DROP TABLE wines; --",
    "%' OR 1=1 --",
    "\\",
    "_%",
    "%",
    "' OR ''='",
    "$$; DELETE FROM wines; $$",
    '"; TRUNCATE wines; --',
    "*/ SELECT pg_sleep(10); /*",
]
UNICODE = [
    "🍷🍷🍷 стейк 🥩",
    "יין אדום",  # Hebrew, right to left
    "نبيذ أحمر",  # Arabic
    "\u202eкаберне",  # right-to-left override
    "ка\u0301берне",  # combining acute accent
    "е\u0308",  # е + combining diaeresis (a decomposed ё)
    "каберне\u200b",  # zero-width space
    "\ufeffИталия",  # byte-order mark
    "𝕮𝖆𝖇𝖊𝖗𝖓𝖊𝖙",  # mathematical letters
    "\U0010ffff",
]
SEARCH_TEXT_ARGS = ("wine_type", "sweetness", "grape_variety", "country", "region", "food_pairing")


def call(db, tool, arguments=None, **extra):
    event = {"tool": tool, "arguments": arguments if arguments is not None else {}, **extra}
    result = handle(event, db)
    assert isinstance(result, dict)
    json.dumps(result)
    return result


def search(db, **arguments):
    return call(db, "search_wines", arguments)


def assert_error(result, *fragments):
    assert set(result) <= {"error", "retryable", "not_found"}, result
    assert isinstance(result["error"], str) and result["error"]
    for fragment in fragments:
        assert fragment in result["error"], (fragment, result["error"])


def fingerprint(db) -> tuple:
    """Row count and a checksum of every wine column, embeddings included."""
    with db.connection() as conn:
        return conn.execute(
            "SELECT count(*), md5(coalesce(string_agg(w::text, '|' ORDER BY w.id), '')) FROM wines w"
        ).fetchone()


@pytest.fixture(scope="module")
def unfiltered(catalog_db):
    return search(catalog_db)


@pytest.fixture(scope="module")
def query_vector():
    return LocalHashingEmbeddings().embed(["лёгкое освежающее белое вино на лето"])[0]


def semantic(db, **arguments):
    return call(db, "semantic_search", arguments)


# ---------------------------------------------------------------- enums


@pytest.mark.parametrize(
    "value", ["purple", "RED WINE", "orange", "", "   ", 5, 1.5, True, None, ["red"], {"v": "red"}]
)
def test_invalid_wine_type_is_ignored(catalog_db, unfiltered, value):
    result = search(catalog_db, wine_type=value)
    assert "error" not in result
    assert "wine_type" not in result["filters_applied"]
    assert result == unfiltered


@pytest.mark.parametrize("value", ["amber_style", "medium", "dry-ish", "", 0, False, ["dry"]])
def test_invalid_sweetness_is_ignored(catalog_db, unfiltered, value):
    result = search(catalog_db, sweetness=value)
    assert result == unfiltered
    assert "sweetness" not in result["filters_applied"]


def test_invalid_enum_does_not_drop_the_valid_filters(catalog_db):
    result = search(catalog_db, wine_type="purple", sweetness="sweet", limit=20)
    assert result["filters_applied"] == {"sweetness": "sweet"}
    assert result["found"] > 0 and all(w["sweetness"] == "sweet" for w in result["wines"])


def test_semantic_invalid_wine_type_is_ignored(catalog_db, query_vector):
    base = dict(query="лёгкое и свежее", embedding=query_vector, embedding_model=LOCAL_MODEL_NAME)
    result = semantic(catalog_db, **base, wine_type="purple")
    assert result["filters_applied"] == {}
    assert result == semantic(catalog_db, **base)


# ---------------------------------------------------------------- prices


def test_price_min_above_price_max_drops_price_min(catalog_db):
    result = search(catalog_db, price_min=5000, price_max=1000, limit=20)
    assert result["filters_applied"] == {"price_max": 1000}
    assert result["found"] > 0
    assert all(w["price_rub"] <= 1000 for w in result["wines"])
    assert result == search(catalog_db, price_max=1000, limit=20)


def test_price_min_equal_to_price_max_is_kept(catalog_db):
    result = search(catalog_db, price_min=1290, price_max=1290, limit=20)
    assert result["filters_applied"] == {"price_min": 1290, "price_max": 1290}
    assert result["found"] > 0 and {w["price_rub"] for w in result["wines"]} == {1290}


@pytest.mark.parametrize(
    "value",
    [
        0,
        -1,
        -1500,
        0.0,
        -0.0,
        float("nan"),
        float("inf"),
        float("-inf"),
        "NaN",
        "nan",
        "inf",
        "-Infinity",
        "0",
        "-5",
        "",
    ],
)
@pytest.mark.parametrize("name", ["price_min", "price_max"])
def test_non_positive_or_non_finite_prices_are_ignored(catalog_db, unfiltered, name, value):
    result = search(catalog_db, **{name: value})
    assert "error" not in result, result
    assert name not in result["filters_applied"]
    assert result == unfiltered


def test_a_bad_price_max_leaves_price_min_alone(catalog_db):
    result = search(catalog_db, price_min=20000, price_max=-1, limit=20)
    assert result["filters_applied"] == {"price_min": 20000}
    assert all(w["price_rub"] >= 20000 for w in result["wines"])


@pytest.mark.parametrize(
    "value,expected",
    [
        ("1500", 1500),
        ("1 500", 1500),
        ("1\u00a0500 ₽", 1500),
        ("1500₽", 1500),
        ("1500,5", 1500.5),
        ("1500.50", 1500.5),
        (" 2000 ", 2000),
        (1500, 1500),
        (1500.0, 1500),
        ("1e3", 1000),
    ],
)
def test_numeric_strings_are_accepted(catalog_db, value, expected):
    result = search(catalog_db, price_max=value, limit=20)
    assert result["filters_applied"] == {"price_max": expected}
    assert all(w["price_rub"] <= expected for w in result["wines"])


def test_absurdly_high_price_is_harmless(catalog_db):
    result = search(catalog_db, price_max=1e300, limit=20)
    assert "error" not in result and result["found"] == 20
    assert search(catalog_db, price_min=1e300)["found"] == 0


# ---------------------------------------------------------------- wrong types are errors, not exceptions


@pytest.mark.parametrize(
    "arguments,fragment",
    [
        ({"grape_variety": 5}, "grape_variety"),
        ({"grape_variety": ["Мальбек"]}, "grape_variety"),
        ({"country": ["США"]}, "country"),
        ({"country": True}, "country"),
        ({"region": {"name": "Тоскана"}}, "region"),
        ({"food_pairing": 1.5}, "food_pairing"),
        ({"price_max": "дёшево"}, "price_max"),
        ({"price_max": "1500-2000"}, "price_max"),
        ({"price_min": True}, "price_min"),
        ({"price_min": [1000]}, "price_min"),
        ({"price_max": {"value": 1}}, "price_max"),
        ({"limit": "5"}, "limit"),
        ({"limit": True}, "limit"),
        ({"limit": float("nan")}, "limit"),
        ({"limit": float("inf")}, "limit"),
        ({"exclude_ids": "6f9619ff-8b86-d011-b42d-00c04fc964ff"}, "exclude_ids"),
        ({"exclude_ids": ["not-a-uuid"]}, "exclude_ids"),
        ({"exclude_ids": [1, 2]}, "exclude_ids"),
        ({"exclude_ids": ["00000000-0000-0000-0000-000000000000"] * 201}, "exclude_ids"),
    ],
)
def test_wrong_types_are_clear_errors(catalog_db, arguments, fragment):
    assert_error(search(catalog_db, **arguments), fragment)


def test_empty_and_blank_strings_count_as_absent(catalog_db, unfiltered):
    result = search(
        catalog_db,
        wine_type="",
        sweetness=" ",
        grape_variety="",
        country="   ",
        region="\t\n",
        food_pairing="",
        price_min="",
        price_max="",
    )
    assert result == unfiltered
    assert result["filters_applied"] == {}


def test_null_values_count_as_absent(catalog_db, unfiltered):
    arguments = {name: None for name in (*SEARCH_TEXT_ARGS, "price_min", "price_max", "limit", "exclude_ids")}
    assert search(catalog_db, **arguments) == unfiltered


def test_unknown_arguments_are_ignored(catalog_db, unfiltered):
    assert search(catalog_db, colour="red", vintage=2020, query="x") == unfiltered


def test_no_results_answer_shape(catalog_db):
    result = search(catalog_db, wine_type="sparkling", grape_variety="Саперави", price_max=500)
    assert result == {
        "found": 0,
        "matched": 0,
        "wines": [],
        "filters_applied": {"wine_type": "sparkling", "grape_variety": "Саперави", "price_max": 500},
    }


# ---------------------------------------------------------------- semantic_search errors


@pytest.mark.parametrize(
    "change,fragment",
    [
        ({"query": None}, "query"),
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": 42}, "query"),
        ({"query": "x" * 1001}, "query"),
        ({"embedding": None}, "embedding"),
        ({"embedding": "0.1,0.2"}, "embedding"),
        ({"embedding": [0.1] * 1535}, "1536"),
        ({"embedding": [0.1] * 1537}, "1536"),
        ({"embedding": []}, "1536"),
        ({"embedding": [0.0] * DIMENSIONS}, "zero"),
        ({"embedding": [0] * DIMENSIONS}, "zero"),
        ({"embedding": [float("nan")] + [0.1] * (DIMENSIONS - 1)}, "finite"),
        ({"embedding": [0.1] * (DIMENSIONS - 1) + [float("inf")]}, "finite"),
        ({"embedding": ["0.1"] * DIMENSIONS}, "finite"),
        ({"embedding": [True] * DIMENSIONS}, "finite"),
        ({"embedding": [None] * DIMENSIONS}, "finite"),
        ({"embedding_model": None}, "embedding_model"),
        ({"embedding_model": ""}, "embedding_model"),
        ({"embedding_model": 3}, "embedding_model"),
        ({"price_max": "много"}, "price_max"),
    ],
)
def test_semantic_search_bad_arguments(catalog_db, query_vector, change, fragment):
    arguments = {"query": "лёгкое белое на лето", "embedding": query_vector, "embedding_model": LOCAL_MODEL_NAME}
    arguments.update(change)
    arguments = {k: v for k, v in arguments.items() if v is not None}
    assert_error(semantic(catalog_db, **arguments), fragment)


def test_semantic_search_vector_of_another_model_is_refused(catalog_db, query_vector):
    result = semantic(
        catalog_db, query="лёгкое белое", embedding=query_vector, embedding_model="text-embedding-3-small"
    )
    assert_error(result, "text-embedding-3-small", LOCAL_MODEL_NAME)


def test_semantic_search_other_model_with_filters_is_still_refused(catalog_db, query_vector):
    result = semantic(
        catalog_db, query="x", embedding=query_vector, embedding_model="other-model", wine_type="red", price_max=100000
    )
    assert_error(result, "other-model", LOCAL_MODEL_NAME)


def test_semantic_search_right_model_no_match_is_an_empty_result(catalog_db, query_vector):
    result = semantic(catalog_db, query="x", embedding=query_vector, embedding_model=LOCAL_MODEL_NAME, price_max=10)
    assert result == {"found": 0, "matched": 0, "wines": [], "filters_applied": {"price_max": 10}}


def test_semantic_search_on_an_empty_catalogue_is_an_empty_result(empty_db, query_vector):
    result = semantic(empty_db, query="x", embedding=query_vector, embedding_model=LOCAL_MODEL_NAME)
    assert result == {"found": 0, "matched": 0, "wines": [], "filters_applied": {}}


def test_semantic_search_accepts_integer_components(catalog_db):
    vector = [0] * DIMENSIONS
    vector[7] = 1
    result = semantic(catalog_db, query="x", embedding=vector, embedding_model=LOCAL_MODEL_NAME)
    assert result["found"] == 5
    assert all(0.0 <= w["similarity_score"] <= 1.0 for w in result["wines"])


def test_semantic_search_validates_every_filter_as_search_wines_does(catalog_db, query_vector):
    base = dict(query="лёгкое и свежее", embedding=query_vector, embedding_model=LOCAL_MODEL_NAME)
    filters = dict(
        country="Франция",
        grape_variety="Шардоне",
        food_pairing="рыба",
        sweetness="полусладкое или нет",  # outside the enum: ignored
        region="Бургундия",
        price_min=100000,  # above price_max: dropped
        price_max="5 000 ₽",
    )
    result = semantic(catalog_db, **base, **filters)
    assert result["filters_applied"] == search(catalog_db, **filters)["filters_applied"]
    assert result["filters_applied"] == {
        "price_max": 5000,
        "grape_variety": "Шардоне",
        "country": "Франция",
        "region": "Бургундия",
        "food_pairing": "рыба",
    }
    assert (result["matched"], [w["name"] for w in result["wines"]]) == (1, ["Chablis"])


# ---------------------------------------------------------------- the event envelope


@pytest.mark.parametrize(
    "event",
    [
        None,
        42,
        [],
        ["search_wines"],
        "",
        "not json",
        b"\xff\xfe",
        "[1, 2]",
        '"search_wines"',
        {},
        {"tool": None},
        {"tool": 5},
        {"tool": ["search_wines"]},
        {"tool": "drop_tables"},
        {"tool": "SEARCH_WINES"},
        {"tool": "search_wines "},
        {"tool": "__class__"},
        {"tool": "x" * 10_000},
    ],
)
def test_bad_events_are_errors(catalog_db, event):
    result = handle(event, catalog_db)
    assert_error(result)
    assert len(result["error"]) < 2000


def test_unknown_tool_names_the_known_ones(catalog_db):
    result = handle({"tool": "drop_tables", "arguments": {}}, catalog_db)
    assert_error(result, "unknown tool", "search_wines", "semantic_search")


@pytest.mark.parametrize("arguments", [[1, 2], 5, 1.5, True, "[1, 2]", '"text"', "{not json", "null x"])
def test_non_object_arguments_are_errors(catalog_db, arguments):
    for tool in ("search_wines", "semantic_search", "get_wines", "get_list", "catalog_stats", "save_turn"):
        assert_error(call(catalog_db, tool, arguments))


def test_arguments_may_be_a_json_string(catalog_db):
    as_object = search(catalog_db, wine_type="red", price_max=2000)
    as_string = call(catalog_db, "search_wines", json.dumps({"wine_type": "red", "price_max": 2000}))
    assert as_string == as_object
    assert call(catalog_db, "search_wines", "") == search(catalog_db)
    assert call(catalog_db, "search_wines", "  ") == search(catalog_db)


def test_missing_or_null_arguments_mean_no_arguments(catalog_db, unfiltered):
    assert handle({"tool": "search_wines"}, catalog_db) == unfiltered
    assert handle({"tool": "search_wines", "arguments": None}, catalog_db) == unfiltered
    assert handle({"tool": "search_wines", "arguments": "null"}, catalog_db) == unfiltered


def test_the_whole_event_may_be_a_json_string(catalog_db):
    event = {"tool": "search_wines", "arguments": {"country": "Италия"}}
    assert handle(json.dumps(event, ensure_ascii=False), catalog_db) == handle(event, catalog_db)
    assert handle(json.dumps(event).encode(), catalog_db) == handle(event, catalog_db)


def test_oversized_event_is_refused(catalog_db):
    assert_error(
        handle(json.dumps({"tool": "search_wines", "arguments": {"x": "a" * 6_000_000}}), catalog_db), "too large"
    )


# ---------------------------------------------------------------- hostile strings


def test_injection_strings_in_every_text_argument(catalog_db, query_vector):
    before = fingerprint(catalog_db)
    for text in INJECTIONS:
        for name in SEARCH_TEXT_ARGS:
            result = search(catalog_db, **{name: text}, limit=20)
            assert "error" not in result, (name, text, result)
            if name in result["filters_applied"]:
                assert result["found"] == 0, (name, text, result)  # matched literally, so nothing
            else:  # an enum that is not one, or text with no words: ignored like an absent filter
                assert result == search(catalog_db, limit=20), (name, text)
        for name in ("price_min", "price_max", "limit"):
            assert_error(search(catalog_db, **{name: text}), name)
        assert_error(search(catalog_db, exclude_ids=[text]), "exclude_ids")
        assert_error(call(catalog_db, "get_wines", {"ids": [text]}), "ids")
        assert_error(call(catalog_db, "get_list", {"exclude_ids": [text]}), "exclude_ids")
        # semantic_search: the query is only text, the model name is compared literally
        ok = semantic(catalog_db, query=text, embedding=query_vector, embedding_model=LOCAL_MODEL_NAME, wine_type=text)
        assert ok["found"] == 5 and ok["filters_applied"] == {}
        assert_error(semantic(catalog_db, query="x", embedding=query_vector, embedding_model=text), LOCAL_MODEL_NAME)
        # the tool name itself
        assert_error(handle({"tool": text, "arguments": {}}, catalog_db), "unknown tool")
        assert_error(call(catalog_db, "load_history", {"chat_id": text}), "chat_id")
    assert fingerprint(catalog_db) == before


def test_like_wildcards_match_literally(catalog_db, unfiltered):
    # "%" and "_" are no wildcards: a region matches whole words, and one without words is not a filter
    for text in ("Т_скана", "Тоск%", "%оскана", "_оскана"):
        result = search(catalog_db, region=text)
        assert result["found"] == 0, text
    for text in ("%", "%%", "_%"):
        assert search(catalog_db, region=text) == unfiltered, text
    assert search(catalog_db, grape_variety="%")["found"] == 0
    assert search(catalog_db, grape_variety="_ %")["found"] == 0
    assert search(catalog_db, country="%")["found"] == 0


@pytest.mark.parametrize("text", ["_", "-", "_ -"])
def test_region_of_only_separators_is_not_a_filter(catalog_db, unfiltered, text):
    result = search(catalog_db, region=text)
    assert result["found"] == 0 or ("region" not in result["filters_applied"] and result == unfiltered)


def test_food_with_no_words_is_not_a_filter(catalog_db, unfiltered):
    for text in ("%", "_%", "!!!", "🍷", "\\"):
        result = search(catalog_db, food_pairing=text)
        assert result == unfiltered, text


@pytest.mark.parametrize("name", SEARCH_TEXT_ARGS)
def test_huge_strings_in_every_text_argument(catalog_db, unfiltered, name):
    before = fingerprint(catalog_db)
    huge = "каберне " * 12_500  # 100k characters
    assert len(huge) == 100_000
    result = search(catalog_db, **{name: huge})
    if name in ("wine_type", "sweetness"):
        assert result == unfiltered  # an invalid enum is ignored, whatever its size
    else:
        assert_error(result, name, "too long")
    assert fingerprint(catalog_db) == before


def test_huge_strings_in_semantic_search_and_data_ops(catalog_db, query_vector):
    huge = "ы" * 100_000
    assert_error(semantic(catalog_db, query=huge, embedding=query_vector, embedding_model=LOCAL_MODEL_NAME), "query")
    assert_error(semantic(catalog_db, query="x", embedding=query_vector, embedding_model=huge), "embedding_model")
    assert_error(call(catalog_db, "save_turn", {"chat_id": 1, "user_text": huge, "answer_text": "ok"}), "2000")
    assert_error(call(catalog_db, "get_wines", {"ids": [huge]}), "ids")
    assert_error(handle({"tool": huge, "arguments": {}}, catalog_db), "unknown tool")


def test_filter_text_at_the_length_limit_is_accepted(catalog_db):
    assert search(catalog_db, country="я" * 200)["found"] == 0
    assert_error(search(catalog_db, country="я" * 201), "country")


@pytest.mark.parametrize("text", UNICODE, ids=range(len(UNICODE)))
def test_unicode_in_every_text_argument(catalog_db, query_vector, text):
    before = fingerprint(catalog_db)
    for name in SEARCH_TEXT_ARGS:
        result = search(catalog_db, **{name: text})
        assert "error" not in result, (name, text, result)
        assert result["found"] == len(result["wines"]) <= 5
    result = semantic(
        catalog_db, query=text, embedding=LocalHashingEmbeddings().embed([text])[0], embedding_model=LOCAL_MODEL_NAME
    )
    assert result["found"] == 5
    assert fingerprint(catalog_db) == before


def test_emoji_around_a_dish_still_finds_it(catalog_db):
    plain = search(catalog_db, food_pairing="стейк", limit=20)
    assert search(catalog_db, food_pairing="🥩 стейк 🍷", limit=20) == {
        **plain,
        "filters_applied": {"food_pairing": "🥩 стейк 🍷"},
    }


@pytest.mark.parametrize("name", ["grape_variety", "country", "region", "food_pairing"])
def test_nul_byte_is_an_error(catalog_db, name):
    assert_error(search(catalog_db, **{name: "каб\x00ерне"}), name, "NUL")


def test_nul_byte_in_the_query_and_enums(catalog_db, query_vector, unfiltered):
    assert_error(
        semantic(catalog_db, query="лёгкое\x00", embedding=query_vector, embedding_model=LOCAL_MODEL_NAME), "NUL"
    )
    assert search(catalog_db, wine_type="red\x00") == unfiltered
    assert_error(call(catalog_db, "save_turn", {"chat_id": 1, "user_text": "a\x00b", "answer_text": "ok"}))


def test_lone_surrogates_do_not_crash(catalog_db):
    result = search(catalog_db, country="\ud800")
    assert "error" in result or result["found"] == 0


def test_tool_never_raises_on_random_garbage(catalog_db):
    garbage = [None, True, 0, -1, 2**70, 1e308, float("nan"), "", "x", [], [None], {}, {"a": []}, ["'; --"]]
    for tool in ("search_wines", "semantic_search", "get_wines", "get_list", "load_history", "catalog_stats"):
        for name in (
            "wine_type",
            "grape_variety",
            "price_max",
            "limit",
            "exclude_ids",
            "query",
            "embedding",
            "embedding_model",
            "ids",
            "chat_id",
        ):
            for value in garbage:
                result = call(catalog_db, tool, {name: value})
                assert "error" in result or "wines" in result or "messages" in result or "embedding_models" in result


def test_price_filter_values_are_finite_in_the_answer(catalog_db):
    result = search(catalog_db, price_max="1e400")
    assert "price_max" not in result["filters_applied"] or math.isfinite(result["filters_applied"]["price_max"])
