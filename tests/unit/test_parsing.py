"""Structured answer parsing, grounding, history rendering and truncation (docs/architecture.md)."""

from __future__ import annotations

import json

import pytest
from sommelier.agent.answer import extract_json, parse_final_response, parse_legacy, wine_key
from sommelier.domain.answer import SommelierResponse, answer_as_text, truncate_for_storage

from tests.wines import by_id

WINE_ID = "6f1c1f7e-3f55-4d0e-9a8e-2b9b3c1d0a11"
FOUND = by_id({"id": WINE_ID, "name": "Malbec", "producer": "Luigi Bosca", "price_rub": 2490})


def answer(**overrides) -> str:
    data = {
        "response_type": "recommendation",
        "intro": "Вот мой выбор.",
        "wines": [{"wine_id": WINE_ID, "wine_name": "Malbec", "description": "Сочный мальбек к стейку."}],
        "closing": "Подобрать ещё?",
        "guard_type": None,
    }
    data.update(overrides)
    return json.dumps(data, ensure_ascii=False)


class TestTruncation:
    def test_short_text_is_kept(self):
        assert truncate_for_storage("a" * 2000) == "a" * 2000

    def test_cuts_at_last_blank_line(self):
        text = "a" * 1500 + "\n\n" + "b" * 600
        assert truncate_for_storage(text) == "a" * 1500

    def test_cuts_after_last_sentence_without_blank_lines(self):
        text = "a" * 1500 + ". " + "b" * 600
        assert truncate_for_storage(text) == "a" * 1500 + "."

    def test_hard_cut_without_any_boundary(self):
        assert truncate_for_storage("x" * 2001) == "x" * 2000

    def test_boundary_exactly_at_limit(self):
        text = "a" * 1998 + "\n\n" + "b"
        assert truncate_for_storage(text) == "a" * 1998

    def test_result_always_fits(self):
        for text in ("a. " * 900, "a\n\n" * 900, "я" * 5000):
            assert len(truncate_for_storage(text)) <= 2000


class TestExtractJson:
    @pytest.mark.parametrize(
        "wrapper",
        [
            "{}",
            "```json\n{}\n```",
            "```\n{}\n```",
            "Вот ответ: {} — надеюсь, помог",
            "text\n```JSON\n{}```",
        ],
    )
    def test_tolerant(self, wrapper):
        payload = answer()
        assert extract_json(wrapper.replace("{}", payload))["intro"] == "Вот мой выбор."

    def test_no_json(self):
        with pytest.raises(ValueError):
            extract_json("просто текст без JSON")


class TestValidation:
    def test_valid_and_grounded(self):
        result = parse_final_response(answer(), FOUND)
        assert result.ok and result.wine_ids == [WINE_ID]
        assert "Malbec: Сочный мальбек" in result.text

    @pytest.mark.parametrize(
        "overrides,fragment",
        [
            ({"response_type": "maybe"}, "response_type"),
            ({"wines": []}, "at least one wine"),
            ({"response_type": "informational"}, "must not contain wines"),
            ({"response_type": "off_topic", "wines": []}, "guard_type is required"),
            ({"guard_type": "prompt_injection"}, "only allowed"),
            ({"intro": ""}, "intro"),
            ({"closing": ""}, "closing"),
            ({"wines": [{"wine_name": "Malbec", "description": "a"}] * 4}, "wines"),
            ({"wines": [{"wine_name": "", "description": "a"}]}, "wine_name"),
            ({"wines": [{"wine_name": "Malbec", "description": ""}]}, "description"),
            ({"wines": [{"wine_name": "Malbec", "description": "x" * 801}]}, "description"),
        ],
    )
    def test_rules(self, overrides, fragment):
        result = parse_final_response(answer(**overrides), FOUND)
        assert not result.ok and fragment in result.error

    def test_invented_wine_is_rejected(self):
        result = parse_final_response(answer(wines=[{"wine_name": "Château Fake", "description": "x"}]), FOUND)
        assert not result.ok and "Château Fake" in result.error

    def test_wrong_id_but_right_name_is_grounded_by_name(self):
        wines = [{"wine_id": "00000000-0000-0000-0000-000000000000", "wine_name": "MALBEC 2022", "description": "x"}]
        result = parse_final_response(answer(wines=wines), FOUND)
        assert result.ok and result.wine_ids == [WINE_ID]
        assert result.response.wines[0].wine_name == "Malbec"

    def test_producer_plus_name(self):
        wines = [{"wine_name": "Luigi Bosca Malbec", "description": "x"}]
        assert parse_final_response(answer(wines=wines), FOUND).ok

    def test_empty_and_non_object(self):
        assert "пустой" in parse_final_response("", FOUND).error
        assert not parse_final_response("[1, 2]", FOUND).ok

    def test_legacy_format_is_accepted_and_grounded(self):
        text = "[INTRO] Привет! [WINE:1] Malbec — сочный и мягкий. [CLOSING] Ещё?"
        result = parse_final_response(text, FOUND)
        assert result.ok and result.wine_ids == [WINE_ID]


def test_wine_key_normalises():
    assert wine_key("Château  Margaux, 2015") == wine_key("château margaux") == "chateau margaux"
    assert wine_key("Ёлка-Вино") == wine_key("елка вино")


def test_legacy_parser_heuristic_and_tags():
    parsed = parse_legacy("[INTRO]Вступление[WINE:1]**Malbec**: вкусно[WINE:2]Rioja — тоже[CLOSING]Вопрос?")
    assert parsed.is_structured and parsed.intro == "Вступление" and parsed.closing == "Вопрос?"
    assert parsed.wine_names == ["Malbec", "Rioja"]
    plain = parse_legacy("Первый абзац.\n\nВино один.\n\nВопрос?")
    assert plain.intro == "Первый абзац." and plain.wines == ["Вино один."] and plain.closing == "Вопрос?"


def test_render_text_for_history():
    response = SommelierResponse.model_validate_json(answer())
    assert answer_as_text(response) == "Вот мой выбор.\n\nMalbec: Сочный мальбек к стейку.\n\nПодобрать ещё?"


def test_the_response_format_schema_is_strict_and_carries_its_limits():
    from sommelier.domain.answer import RESPONSE_JSON_SCHEMA, RESPONSE_JSON_SCHEMA_PATTERNS

    def objects(node):
        if node.get("type") == "object":
            yield node
            for value in node["properties"].values():
                yield from objects(value)
        if node.get("type") == "array":
            yield from objects(node["items"])

    for sent in (RESPONSE_JSON_SCHEMA, RESPONSE_JSON_SCHEMA_PATTERNS):
        schema = sent["schema"]
        assert sent["strict"] is True
        assert set(schema["properties"]) == {"response_type", "intro", "wines", "closing", "guard_type"}
        for node in objects(schema):
            assert node["additionalProperties"] is False and node["required"] == list(node["properties"])
        assert schema["properties"]["guard_type"]["type"] == ["string", "null"]
        assert None in schema["properties"]["guard_type"]["enum"]
        wine = schema["properties"]["wines"]["items"]["properties"]
        assert set(wine) == {"ref", "reason"} and wine["ref"]["pattern"] == "^w[1-9][0-9]?$"
        assert schema["properties"]["wines"]["maxItems"] == 3
    lengths = RESPONSE_JSON_SCHEMA["schema"]["properties"]
    assert lengths["intro"]["maxLength"] == 500 and lengths["closing"]["maxLength"] == 150
    assert lengths["wines"]["items"]["properties"]["reason"]["maxLength"] == 240
    patterns = RESPONSE_JSON_SCHEMA_PATTERNS["schema"]["properties"]
    assert patterns["intro"]["pattern"] == "^[\\s\\S]{1,500}$" and "maxLength" not in patterns["intro"]


def test_an_answer_by_refs_is_grounded_and_today_s_shape_still_is():
    second = "9a0b5c2d-1e3f-4a5b-8c7d-6e5f4a3b2c1d"
    found = by_id(
        {"id": WINE_ID, "name": "Malbec", "producer": "Luigi Bosca", "price_rub": 2490},
        {"id": second, "name": "Красностоп", "producer": "Ведерниковъ", "price_rub": 1890},
    )
    ids = list(found)
    new = json.dumps(
        {
            "response_type": "recommendation",
            "intro": "Вот мой выбор.",
            "wines": [{"ref": "w2", "reason": "Сочное и мягкое к мясу."}, {"ref": "W1", "reason": "Свежее."}],
            "closing": "Подобрать ещё?",
            "guard_type": None,
        },
        ensure_ascii=False,
    )
    result = parse_final_response(new, found)
    assert result.ok and result.wine_ids == [ids[1], ids[0]]
    assert [w.wine_name for w in result.response.wines] == [found[ids[1]].name, found[ids[0]].name]
    unknown = parse_final_response(new.replace('"w2"', '"w9"'), found)
    assert not unknown.ok and "w9" in unknown.error
    old = parse_final_response(answer(), found)  # today's shape: a UUID wine_id, a name, a description
    assert old.ok and old.response.wines[0].description
