"""The metrics on hand-built turns: each one must detect the problem it exists for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sommelier_dev.evaluation.golden import parse_golden_set
from sommelier_dev.evaluation.harness import CaseRun, TurnRecord
from sommelier_dev.evaluation.metrics import (
    Catalog,
    constraint_violations,
    missing_filters,
    normalise_filters,
    percentile,
    score_case,
    summarize,
)
from sommelier_dev.evaluation.recording import LLMCallRecord, ToolCallRecord
from sommelier_dev.evaluation.report import check_thresholds, render_markdown, thresholds_for


@pytest.fixture(scope="module")
def catalog(shipped_wines) -> Catalog:
    return Catalog({f"00000000-0000-0000-0000-{i:012d}": wine for i, wine in enumerate(shipped_wines)})


def wine_id(catalog: Catalog, name: str, producer: str) -> str:
    (found,) = catalog.ids_for_label(name, producer)
    return found


def tool_wine(catalog: Catalog, wid: str, score: float | None = None) -> dict:
    row = catalog.get(wid)
    wine = {"id": wid, "name": row["name"], "producer": row["producer"], "price_rub": row["price_rub"]}
    if score is not None:
        wine["similarity_score"] = score
    return wine


def make_case(expect: dict, *, history: list[str] | None = None, category: str = "c", query: str = "запрос"):
    raw = {"id": "case", "category": category, "query": query, "expect": expect}
    if history:
        raw["history"] = history
    return parse_golden_set({"cases": [raw]}).cases[0]


def make_turn(
    wines: list[dict],
    calls: list[ToolCallRecord],
    *,
    response_type: str = "recommendation",
    guard_type: str | None = None,
    llm_calls: list[LLMCallRecord] | None = None,
) -> TurnRecord:
    response = {
        "response_type": response_type,
        "guard_type": guard_type,
        "intro": "…",
        "closing": "…",
        "wines": [{"wine_id": w.get("id"), "wine_name": w["name"], "description": "…"} for w in wines],
    }
    return TurnRecord(
        text="запрос",
        response=response,
        metadata={"llm_calls": len(llm_calls or []), "tokens": {"prompt": 100, "completion": 20}, "mode": "llm"},
        tool_calls=calls,
        llm_calls=llm_calls or [],
        wall_ms=12.0,
    )


def search(name: str, arguments: dict, wines: list[dict]) -> ToolCallRecord:
    return ToolCallRecord(name=name, arguments=arguments, duration_ms=1.0, wines=wines, found=len(wines))


# --------------------------------------------------------------------------- filters


def test_filters_compare_after_normalising():
    sent = {
        "wine_type": "красное",
        "country": "Штаты",
        "grape_variety": "Shiraz",
        "food_pairing": "стейк из говядины",
        "price_max": "2 000 ₽",
        "region": "Tuscany",
        "limit": 5,
        "exclude_ids": [],
    }
    normal = normalise_filters(sent)
    assert normal["wine_type"] == "red" and normal["country"] == "сша" and normal["grape_variety"] == "сира"
    assert normal["price_max"] == 2000.0 and normal["region"] == "тоскана"
    expected = {
        "wine_type": "red",
        "country": "США",
        "grape_variety": "Сира",
        "food_pairing": "стейк",
        "price_max": 2000,
        "region": "Тоскана",
    }
    assert missing_filters(expected, sent) == []


def test_filter_mismatches_are_reported():
    sent = {"wine_type": "white", "price_max": 5000, "country": "Италия", "food_pairing": "рыба"}
    expected = {
        "wine_type": "red",
        "price_max": 2000,
        "country": "Франция",
        "food_pairing": "стейк",
        "grape_variety": "Мальбек",
    }
    assert sorted(missing_filters(expected, sent)) == sorted(expected)


def test_price_windows_and_alternatives():
    assert missing_filters({"price_max": [1000, 2000]}, {"price_max": 1500}) == []
    assert missing_filters({"price_max": [1000, 2000]}, {"price_max": 2500}) == ["price_max"]
    assert missing_filters({"food_pairing": ["рыба", "морепродукты"]}, {"food_pairing": "морепродуктам"}) == []
    assert missing_filters({"grape_variety": "Каберне"}, {"grape_variety": "Каберне Совиньон"}) == []
    assert missing_filters({"grape_variety": "Каберне Совиньон"}, {"grape_variety": "Каберне"}) == ["grape_variety"]


# --------------------------------------------------------------------------- constraints


def test_constraints_on_catalogue_rows(catalog):
    malbec = catalog.get(wine_id(catalog, "Malbec", "Luigi Bosca"))
    ok = {
        "wine_type": "red",
        "sweetness": "dry",
        "price_max": 2500,
        "country": "Аргентина",
        "grape": "Мальбек",
        "food": ["стейк"],
        "region": "Мендоса",
    }
    assert constraint_violations(malbec, ok, previous_ids=set(), previous_prices=[], wine_id="x") == []
    broken = constraint_violations(
        malbec,
        {
            "wine_type": "white",
            "price_max": 2000,
            "country": "Чили",
            "food": ["рыб"],
            "grape": "Рислинг",
            "cheaper_than_previous": True,
            "not_previous": True,
        },
        previous_ids={"x"},
        previous_prices=[1990.0],
        wine_id="x",
    )
    assert len(broken) == 7


# --------------------------------------------------------------------------- groundedness and constraints per case


def test_an_invented_wine_is_ungrounded_and_breaks_every_constraint(catalog):
    case = make_case(
        {
            "response_type": "recommendation",
            "tool": "search_wines",
            "filters": {"wine_type": "red"},
            "constraints": {"wine_type": "red"},
        }
    )
    real = tool_wine(catalog, wine_id(catalog, "Malbec", "Luigi Bosca"))
    invented = {"id": None, "name": "Château Imaginaire"}
    turn = make_turn([real, invented], [search("search_wines", {"wine_type": "red"}, [real])])
    score = score_case(CaseRun(case=case, chat_id=-1, turn=turn), catalog)
    assert score.grounded_pairs == (1, 2)
    assert score.constraint_pairs == (1, 2)
    assert not score.passed and any("Imaginaire" in f for f in score.failures())


def test_a_real_wine_not_returned_this_turn_is_ungrounded(catalog):
    case = make_case({"response_type": "recommendation"})
    shown = tool_wine(catalog, wine_id(catalog, "Malbec", "Luigi Bosca"))
    elsewhere = tool_wine(catalog, wine_id(catalog, "Barolo", "Pio Cesare"))
    turn = make_turn([elsewhere], [search("search_wines", {}, [shown])])
    score = score_case(CaseRun(case=case, chat_id=-1, turn=turn), catalog)
    assert score.wines[0].in_catalog and not score.wines[0].returned_by_tool
    assert score.grounded_pairs == (0, 1)


def test_follow_up_constraints_use_the_previous_turn(catalog):
    case = make_case(
        {"response_type": "recommendation", "constraints": {"cheaper_than_previous": True, "not_previous": True}},
        history=["красное до 3000"],
    )
    rioja = tool_wine(catalog, wine_id(catalog, "Rioja Reserva", "Marqués de Riscal"))  # 2690
    cheap = tool_wine(catalog, wine_id(catalog, "Мукузани", "Tbilvino"))  # 1290
    pricey = tool_wine(catalog, wine_id(catalog, "Malbec", "Luigi Bosca"))  # 2490
    previous = make_turn([rioja, pricey], [search("search_wines", {}, [rioja, pricey])])
    turn = make_turn([cheap, pricey], [search("search_wines", {}, [cheap, pricey])])
    score = score_case(CaseRun(case=case, chat_id=-1, history=[previous], turn=turn), catalog)
    assert score.constraint_pairs == (1, 2)
    assert any("earlier turn" in v for v in score.wines[1].violations)


# --------------------------------------------------------------------------- recall@5


def test_recall_ranks_scored_candidates_first(catalog):
    labels = [("Chablis", "Domaine William Fèvre"), ("Albariño", "Martín Códax"), ("Сибирьковый", "Ведерниковъ")]
    case = make_case(
        {
            "response_type": "recommendation",
            "tool": "semantic_search",
            "relevant": [{"name": n, "producer": p} for n, p in labels],
        }
    )
    ids = {n: wine_id(catalog, n, p) for n, p in labels}
    others = [wid for wid in catalog.rows if wid not in ids.values()][:6]
    semantic = [tool_wine(catalog, ids["Chablis"], 0.9)] + [
        tool_wine(catalog, w, 0.8 - i / 100) for i, w in enumerate(others[:4])
    ]
    semantic.append(tool_wine(catalog, ids["Albariño"], 0.5))  # 6th by score: outside the top 5
    structured = [tool_wine(catalog, ids["Сибирьковый"])]  # no score: ranked after every scored wine
    turn = make_turn([semantic[0]], [search("search_wines", {}, structured), search("semantic_search", {}, semantic)])
    score = score_case(CaseRun(case=case, chat_id=-1, turn=turn), catalog)
    assert score.recall_at_5 == pytest.approx(1 / 3)
    assert score.relevant_found == ["Chablis / Domaine William Fèvre"]
    assert score.mood_precision == 1.0


def test_recall_is_capped_at_five_labels(catalog):
    names = [
        "Beaujolais-Villages",
        "Pinot Grigio",
        "Rueda Verdejo",
        "Whispering Angel",
        "Dr. L Riesling",
        "Casal Garcia Vinho Verde",
    ]
    labels = [(n, catalog.get(catalog.find_by_name(n))["producer"]) for n in names]
    case = make_case(
        {
            "response_type": "recommendation",
            "tool": "semantic_search",
            "relevant": [{"name": n, "producer": p} for n, p in labels],
        }
    )
    found = [tool_wine(catalog, wine_id(catalog, n, p), 0.9 - i / 10) for i, (n, p) in enumerate(labels[:5])]
    turn = make_turn(found[:3], [search("semantic_search", {"query": "лёгкое"}, found)])
    score = score_case(CaseRun(case=case, chat_id=-1, turn=turn), catalog)
    assert score.recall_at_5 == 1.0 and score.recall_at_5_uncapped == pytest.approx(5 / 6)


# --------------------------------------------------------------------------- guards, tools, model drafts


def test_guards_and_tool_choice(catalog):
    attack = make_case({"response_type": "off_topic", "guard_type": "prompt_injection", "tool": None})
    answered = make_turn([], [search("semantic_search", {"query": "x"}, [])], response_type="informational")
    score = score_case(CaseRun(case=attack, chat_id=-1, turn=answered), catalog)
    assert score.guard_ok is False and score.tool_ok is False and not score.response_type_ok

    normal = make_case({"response_type": "recommendation", "tool": "search_wines"})
    blocked = make_turn([], [], response_type="off_topic", guard_type="social_engineering")
    score = score_case(CaseRun(case=normal, chat_id=-1, turn=blocked), catalog)
    assert score.guard_false_positive and score.guard_ok is None and score.tool_ok is False


def test_model_groundedness_judges_the_first_draft(catalog):
    case = make_case({"response_type": "recommendation"})
    real = tool_wine(catalog, wine_id(catalog, "Malbec", "Luigi Bosca"))
    draft = json.dumps(
        {
            "response_type": "recommendation",
            "intro": "…",
            "closing": "…",
            "guard_type": None,
            "wines": [
                {"wine_id": None, "wine_name": "Château Imaginaire", "description": "…"},
                {"wine_id": real["id"], "wine_name": "Malbec", "description": "…"},
            ],
        }
    )
    llm_calls = [
        LLMCallRecord(None, [{"name": "search_wines", "arguments": "{}"}], 10, 5, 1.0, True),
        LLMCallRecord(draft, [], 10, 5, 1.0, True),
        LLMCallRecord("{}", [], 10, 5, 1.0, False),
    ]
    turn = make_turn([real], [search("search_wines", {}, [real])], llm_calls=llm_calls)
    score = score_case(CaseRun(case=case, chat_id=-1, turn=turn), catalog)
    assert (score.model_grounded, score.model_recommended) == (1, 2)
    assert score.grounded_pairs == (1, 1)  # what the customer got is grounded
    summary = summarize([score])
    assert summary["overall"]["model_groundedness"]["value"] == 0.5


# --------------------------------------------------------------------------- summaries and thresholds


def test_percentile_matches_linear_interpolation():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert percentile([], 50) is None
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)


def test_thresholds_merge_modes_and_skip_unmeasured(catalog):
    data = {
        "targets": {"groundedness": {"min": 1.0}, "recall_at_5_mood": {"min": 0.6}},
        "modes": {"offline": {"tool_choice_accuracy": {"min": 0.9}}, "llm": {"tool_choice_accuracy": {"min": 0.5}}},
    }
    assert thresholds_for(data, "llm")["tool_choice_accuracy"] == {"min": 0.5}
    case = make_case({"response_type": "recommendation", "tool": "search_wines"})
    real = tool_wine(catalog, wine_id(catalog, "Malbec", "Luigi Bosca"))
    turn = make_turn([real], [search("semantic_search", {"query": "x"}, [real])])
    summary = summarize([score_case(CaseRun(case=case, chat_id=-1, turn=turn), catalog)])
    rows = {r["metric"]: r for r in check_thresholds(summary, thresholds_for(data, "offline"))}
    assert rows["groundedness"]["ok"] and rows["recall_at_5_mood"]["status"] == "not measured"
    assert not rows["tool_choice_accuracy"]["ok"]
    report = {
        "meta": {
            "mode": "offline",
            "model": "m",
            "finished_at": "now",
            "command": "sommelier eval",
            "golden_set": "g",
            "cases": 1,
            "turns": 1,
            "database": "db",
            "catalog_wines": 64,
            "embedding_model": "e",
            "machine": {"cpu": "cpu", "cpus": 1, "python": "3", "platform": "p"},
            "duration_s": 0.1,
        },
        "summary": summary,
        "thresholds": {"passed": False, "rows": list(rows.values())},
        "cases": [
            {
                "score": {
                    "id": "case",
                    "category": "c",
                    "query": "запрос",
                    "history": [],
                    "passed": False,
                    "failures": ["tools called: semantic_search"],
                    "warnings": [],
                }
            }
        ],
    }
    markdown = render_markdown(report, thresholds_for(data, "offline"))
    assert "❌" in markdown and "tools called: semantic_search" in markdown


def test_a_golden_set_may_have_its_own_bounds_with_a_reason():
    data = {
        "targets": {"recall_at_5_mood": {"min": 0.6}},
        "modes": {"offline": {"recall_at_5_mood": {"min": 0.8}, "tool_choice_accuracy": {"min": 0.99}}},
        "golden_sets": {
            "golden_set_shop.json": {"offline": {"recall_at_5_mood": {"min": 0.3, "why": "no occasion in the text"}}}
        },
    }
    general = thresholds_for(data, "offline")
    assert general["recall_at_5_mood"] == {"min": 0.8}
    for golden in ("eval/golden_set_shop.json", Path("/elsewhere/golden_set_shop.json")):
        own = thresholds_for(data, "offline", golden=golden)
        assert own["recall_at_5_mood"] == {"min": 0.3, "general": {"min": 0.8}, "why": "no occasion in the text"}
        assert own["tool_choice_accuracy"] == {"min": 0.99}, "other metrics keep the general bound"
    assert thresholds_for(data, "llm", golden="eval/golden_set_shop.json")["recall_at_5_mood"] == {"min": 0.6}
    assert thresholds_for(data, "offline", golden="eval/golden_set.json") == general

    # a recall of 0.4 misses the general floor and meets the shop's own; the row says what it replaced and why
    summary = {"overall": {"recall_at_5_mood": {"value": 0.4, "n": 12}}}
    assert not check_thresholds(summary, general)[0]["ok"]
    (row,) = check_thresholds(summary, thresholds_for(data, "offline", golden="golden_set_shop.json"))[:1]
    assert row["metric"] == "recall_at_5_mood" and row["ok"]
    assert row["general"] == 0.8 and row["why"] == "no occasion in the text"


@pytest.mark.parametrize(
    "bound",
    [
        {"min": 0.3},  # no reason
        {"min": 0.3, "why": "  "},
        {"why": "no limit"},
        {"min": "low", "why": "a string"},
        {"min": True, "why": "a bool"},
    ],
)
def test_a_golden_sets_bound_without_a_reason_or_a_number_is_refused(bound):
    data = {"golden_sets": {"g.json": {"offline": {"recall_at_5_mood": bound}}}}
    with pytest.raises(ValueError, match=r"golden_sets\.g\.json\.offline\.recall_at_5_mood"):
        thresholds_for(data, "offline", golden="g.json")


def test_a_golden_sets_bound_must_name_a_known_metric():
    data = {"golden_sets": {"g.json": {"offline": {"recal": {"min": 1, "why": "x"}}}}}
    with pytest.raises(ValueError, match="unknown metric"):
        thresholds_for(data, "offline", golden="g.json")
