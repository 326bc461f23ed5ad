"""semantic_search: ranking quality on mood queries, filters in the same SQL, and the answer format.

Query vectors come from the offline `LocalHashingEmbeddings` (the model the catalogue fixture
is embedded with). Expected rankings are recomputed by brute force in numpy.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sommelier.domain.records import WineRecord
from sommelier.embeddings.local import LOCAL_MODEL_NAME, LocalHashingEmbeddings
from sommelier.toolfn.handler import handle

from tests.food_oracle import BY_REQUEST, pairs_with

MOOD_FILE = Path(__file__).resolve().parents[1] / "data" / "mood_queries.json"
MOOD_QUERIES = json.loads(MOOD_FILE.read_text("utf-8"))
TOP_K = 5
WINE_KEYS = {
    "id",
    "name",
    "producer",
    "region",
    "vintage_year",
    "grape_varieties",
    "wine_type",
    "sweetness",
    "body",
    "tannins",
    "acidity",
    "price_rub",
    "description",
    "tasting_notes",
    "food_pairings",
    "similarity_score",
}

embedder = LocalHashingEmbeddings()


def semantic(db, query: str, **arguments) -> dict:
    result = handle(
        {
            "tool": "semantic_search",
            "arguments": {
                "query": query,
                "embedding": embedder.embed([query])[0],
                "embedding_model": embedder.model,
                **arguments,
            },
        },
        db,
    )
    assert "error" not in result, result
    json.dumps(result)
    return result


@pytest.fixture(scope="module")
def catalogue_vectors(shipped_wines):
    """Each shipped wine's embedding, computed here the way the importer describes the wine."""
    texts = [WineRecord.model_validate(w).embedding_text() for w in shipped_wines]
    return np.asarray(embedder.embed(texts), dtype=np.float64)


def brute_force(shipped_wines, vectors, query: str, keep=lambda w: True, k: int = TOP_K):
    q = np.asarray(embedder.embed([query])[0], dtype=np.float64)
    scores = vectors @ q / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))
    # similarity_score is 1 - cosine distance, clamped to 0..1
    ranked = sorted(
        ((max(0.0, float(s)), w) for s, w in zip(scores, shipped_wines, strict=True) if keep(w)), key=lambda p: -p[0]
    )
    return ranked[:k]


# ---------------------------------------------------------------- mood queries


def test_mood_query_file_is_usable(shipped_wines):
    assert len(MOOD_QUERIES) >= 10
    catalogue = {(w["name"], w["producer"]) for w in shipped_wines}
    for item in MOOD_QUERIES:
        assert item["query"].strip()
        assert item["relevant"], item["query"]
        for wine in item["relevant"]:
            assert (wine["name"], wine["producer"]) in catalogue, (item["query"], wine)


@pytest.mark.parametrize("item", MOOD_QUERIES, ids=[q["query"] for q in MOOD_QUERIES])
def test_mood_query_finds_a_relevant_wine_in_the_top_5(catalog_db, item):
    result = semantic(catalog_db, item["query"], limit=TOP_K)
    # A description that states a hard constraint («десертное» is sweet) lists only the wines meeting it.
    assert result["found"] == (min(TOP_K, result["matched"]) if result.get("read_from_query") else TOP_K)
    relevant = {(w["name"], w["producer"]) for w in item["relevant"]}
    top = [(w["name"], w["producer"]) for w in result["wines"]]
    assert relevant & set(top), f"{item['query']!r}: top 5 {top}, none of {sorted(relevant)}"


def test_mood_queries_recall_at_5(catalog_db):
    """Average share of the top 5 that is labelled relevant, as a floor against regressions."""
    precision = []
    for item in MOOD_QUERIES:
        relevant = {(w["name"], w["producer"]) for w in item["relevant"]}
        top = [(w["name"], w["producer"]) for w in semantic(catalog_db, item["query"])["wines"]]
        precision.append(len(relevant & set(top)) / min(TOP_K, len(relevant)))
    assert sum(precision) / len(precision) >= 0.5, precision


# ---------------------------------------------------------------- ranking equals brute force


@pytest.mark.parametrize(
    ("query", "stated"),
    [
        # the colour or sweetness the description states is a hard constraint (read_from_query)
        ("лёгкое освежающее белое", ("wine_type", "white")),
        ("насыщенное красное с танинами к мясу", ("wine_type", "red")),
        ("игристое для праздника", ("wine_type", "sparkling")),
        ("сладкое десертное вино", ("sweetness", "sweet")),
    ],
)
def test_ranking_matches_brute_force_cosine(catalog_db, shipped_wines, catalogue_vectors, query, stated):
    result = semantic(catalog_db, query, limit=10)
    key, value = stated
    assert result["read_from_query"] == [key] and result["filters_applied"] == {key: value}
    want = brute_force(shipped_wines, catalogue_vectors, query, lambda w: w[key] == value, k=10)
    got = [w["similarity_score"] for w in result["wines"]]
    assert got == pytest.approx([s for s, _ in want], abs=2e-4)
    # same wines, except where two scores tie within rounding
    for (score, wine), returned in zip(want, result["wines"], strict=True):
        if (wine["name"], wine["producer"]) != (returned["name"], returned["producer"]):
            assert abs(score - returned["similarity_score"]) < 2e-4


def test_a_wines_own_description_ranks_it_first(catalog_db, shipped_wines):
    for wine in shipped_wines[::8]:
        text = WineRecord.model_validate(wine).embedding_text()
        top = semantic(catalog_db, text[:1000], limit=1)["wines"][0]
        assert (top["name"], top["producer"]) == (wine["name"], wine["producer"])
        if len(text) <= 1000:
            assert top["similarity_score"] == pytest.approx(1.0, abs=1e-3)


# ---------------------------------------------------------------- filters in the same query


@pytest.mark.parametrize("wine_type", ["red", "white", "rose", "sparkling"])
def test_wine_type_filter_holds_for_every_result(catalog_db, shipped_wines, catalogue_vectors, wine_type):
    query = "элегантное вино для ужина"
    result = semantic(catalog_db, query, wine_type=wine_type, limit=20)
    assert result["filters_applied"] == {"wine_type": wine_type}
    assert result["found"] == min(20, sum(w["wine_type"] == wine_type for w in shipped_wines))
    assert all(w["wine_type"] == wine_type for w in result["wines"])
    want = brute_force(shipped_wines, catalogue_vectors, query, lambda w: w["wine_type"] == wine_type, k=20)
    assert [w["similarity_score"] for w in result["wines"]] == pytest.approx([s for s, _ in want], abs=2e-4)


@pytest.mark.parametrize("price_max", [900, 1500, 3000])
def test_price_max_filter_holds_for_every_result(catalog_db, shipped_wines, catalogue_vectors, price_max):
    query = "насыщенное красное к стейку"
    result = semantic(catalog_db, query, price_max=price_max, limit=TOP_K)
    assert result["filters_applied"] == {"price_max": price_max}
    assert result["wines"] and all(w["price_rub"] <= price_max for w in result["wines"])
    want = brute_force(shipped_wines, catalogue_vectors, query, lambda w: w["price_rub"] <= price_max)
    assert {(w["name"], w["producer"]) for w in result["wines"]} == {(w["name"], w["producer"]) for _, w in want}


def test_both_filters_together(catalog_db, shipped_wines):
    result = semantic(catalog_db, "что-нибудь к рыбе", wine_type="white", price_max="1 500", limit=20)
    assert result["filters_applied"] == {"wine_type": "white", "price_max": 1500}
    expected = {
        (w["name"], w["producer"]) for w in shipped_wines if w["wine_type"] == "white" and w["price_rub"] <= 1500
    }
    assert {(w["name"], w["producer"]) for w in result["wines"]} == expected


# Every filter of search_wines, applied by the same SQL; the tests' own statement of which shipped wines meet it.
EACH_FILTER = [
    ({"sweetness": "semi_sweet"}, lambda w: w["sweetness"] == "semi_sweet"),
    ({"sweetness": "сладкое"}, lambda w: w["sweetness"] == "sweet"),
    ({"price_min": 5000}, lambda w: w["price_rub"] >= 5000),
    ({"grape_variety": "Пино Нуар"}, lambda w: "Пино Нуар" in w["grape_varieties"]),
    ({"grape_variety": "Shiraz"}, lambda w: "Шираз" in w["grape_varieties"] or "Сира" in w["grape_varieties"]),
    ({"country": "США"}, lambda w: w["country"] == "США"),
    ({"country": "итальянское"}, lambda w: w["country"] == "Италия"),
    ({"region": "Тоскана"}, lambda w: w["region"].startswith("Тоскана")),
    ({"region": "Кахетия"}, lambda w: w["region"] == "Кахетия"),
    ({"food_pairing": "рыба"}, lambda w: pairs_with(w, BY_REQUEST["рыба"])),
    ({"food_pairing": "стейк"}, lambda w: pairs_with(w, BY_REQUEST["стейк"])),
]


@pytest.mark.parametrize(("arguments", "keep"), EACH_FILTER, ids=[str(a) for a, _ in EACH_FILTER])
def test_each_search_wines_filter_holds_in_semantic_search(
    catalog_db, shipped_wines, catalogue_vectors, arguments, keep
):
    query = "элегантное вино для ужина"
    meeting = [w for w in shipped_wines if keep(w)]
    assert meeting and len(meeting) < len(shipped_wines)  # the filter really narrows the catalogue
    result = semantic(catalog_db, query, **arguments, limit=20)
    assert result["matched"] == len(meeting)  # counted with every filter, not only type and price
    assert result["found"] == min(20, len(meeting))
    names = {(w["name"], w["producer"]) for w in meeting}
    assert all((w["name"], w["producer"]) in names for w in result["wines"])
    want = brute_force(shipped_wines, catalogue_vectors, query, keep, k=20)
    assert [w["similarity_score"] for w in result["wines"]] == pytest.approx([s for s, _ in want], abs=2e-4)


def test_all_filters_together_count_what_matches(catalog_db, shipped_wines):
    arguments = {"wine_type": "red", "sweetness": "dry", "price_min": 1000, "price_max": 5000, "country": "Италия"}
    meeting = [
        w
        for w in shipped_wines
        if w["wine_type"] == "red"
        and w["sweetness"] == "dry"
        and 1000 <= w["price_rub"] <= 5000
        and w["country"] == "Италия"
    ]
    result = semantic(catalog_db, "насыщенное красное к ужину", **arguments, limit=1)
    assert (result["found"], result["matched"]) == (1, len(meeting)) and len(meeting) > 1
    assert result["filters_applied"] == arguments


def test_filters_that_exclude_everything_give_an_empty_answer(catalog_db):
    result = semantic(catalog_db, "игристое", wine_type="sparkling", price_max=100)
    assert result == {
        "found": 0,
        "matched": 0,
        "wines": [],
        "filters_applied": {"wine_type": "sparkling", "price_max": 100},
    }


def test_exclude_ids_gives_the_next_best(catalog_db):
    first = semantic(catalog_db, "лёгкое летнее", limit=10)
    shown = [w["id"] for w in first["wines"][:5]]
    second = semantic(catalog_db, "лёгкое летнее", exclude_ids=shown, limit=5)
    assert [w["id"] for w in second["wines"]] == [w["id"] for w in first["wines"][5:10]]


def test_rows_of_another_embedding_model_are_never_compared(fresh_db):
    hidden = semantic(fresh_db, "что открыть на праздник", limit=3)["wines"]
    other = np.zeros(1536)
    other[0] = 1.0
    updated = handle(
        {
            "tool": "update_embeddings",
            "arguments": {
                "embedding_model": "text-embedding-3-small",
                "items": [{"id": w["id"], "embedding": other.tolist()} for w in hidden],
            },
        },
        fresh_db,
    )
    assert updated == {"updated": 3}
    result = semantic(fresh_db, "что открыть на праздник", limit=20)
    assert result["found"] == 20
    assert not {w["id"] for w in hidden} & {w["id"] for w in result["wines"]}
    # …and a query in the other model sees only those rows
    only = handle(
        {
            "tool": "semantic_search",
            "arguments": {
                "query": "x",
                "embedding": other.tolist(),
                "embedding_model": "text-embedding-3-small",
                "limit": 20,
            },
        },
        fresh_db,
    )
    assert {w["id"] for w in only["wines"]} == {w["id"] for w in hidden}
    assert all(w["similarity_score"] == pytest.approx(1.0) for w in only["wines"])


# ---------------------------------------------------------------- the answer format


def test_answer_format(catalog_db, shipped_wines):
    result = semantic(catalog_db, "вино к сырной тарелке")
    # plus "photos" (photo keys by wine id) when a wine found has one: the agent strips it before the model reads
    assert set(result) - {"photos"} == {"found", "matched", "wines", "filters_applied"}
    assert result["found"] == len(result["wines"]) == TOP_K  # capped at 5 by default
    assert result["filters_applied"] == {}
    catalogue = {(w["name"], w["producer"], w["vintage_year"]): w for w in shipped_wines}
    for wine in result["wines"]:
        assert set(wine) == WINE_KEYS
        assert 0.0 <= wine["similarity_score"] <= 1.0
        source = catalogue[(wine["name"], wine["producer"], wine["vintage_year"])]
        assert wine["price_rub"] == source["price_rub"]
        assert wine["region"].endswith(source["country"])
    scores = [w["similarity_score"] for w in result["wines"]]
    assert scores == sorted(scores, reverse=True)


def test_limit_is_capped_at_20(catalog_db):
    assert semantic(catalog_db, "вино", limit=100)["found"] == 20
    assert semantic(catalog_db, "вино", limit=2)["found"] == 2


def test_scores_are_sorted_and_bounded_for_every_mood_query(catalog_db):
    for item in MOOD_QUERIES:
        scores = [w["similarity_score"] for w in semantic(catalog_db, item["query"], limit=20)["wines"]]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= s <= 1.0 for s in scores)


def test_opposite_vector_scores_zero_not_negative(catalog_db):
    vector = [-x for x in embedder.embed(["игристое брют шампанское"])[0]]
    result = handle(
        {
            "tool": "semantic_search",
            "arguments": {"query": "anti", "embedding": vector, "embedding_model": LOCAL_MODEL_NAME, "limit": 20},
        },
        catalog_db,
    )
    assert all(0.0 <= w["similarity_score"] <= 1.0 for w in result["wines"])


def test_same_query_same_answer(catalog_db):
    first = semantic(catalog_db, "согреться зимним вечером")
    assert all(semantic(catalog_db, "согреться зимним вечером") == first for _ in range(3))
