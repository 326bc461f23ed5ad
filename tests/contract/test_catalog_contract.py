"""The catalogue port's contract (CatalogRepository), on the shipped catalogue, for both stores.

Expectations come from the catalogue file (`shipped_wines`) with plain predicates, never from the language
layer's matching: a store that matched differently would fail here.
"""

from __future__ import annotations

import math
import uuid

import pytest
from sommelier.domain.errors import InvalidArgument, PortError
from sommelier.domain.records import ImportRow, WineRecord
from sommelier.domain.search import SearchFilters, SearchResult, ToolRequest, semantic_request
from sommelier.embeddings.local import LocalHashingEmbeddings

EMBEDDER = LocalHashingEmbeddings()
TYPICAL_PRICE = 2000


def search(store, **filters) -> SearchResult:
    return store.catalog.search_wines(SearchFilters(**filters))


def names(result: SearchResult) -> list[str]:
    return [wine.name for wine in result.wines]


def shipped(shipped_wines, predicate) -> list[str]:
    return sorted(w["name"] for w in shipped_wines if predicate(w))


def everything(store, **filters) -> SearchResult:
    return search(store, limit=20, **filters)


def semantic(store, query: str, **arguments):
    request = semantic_request(
        {"query": query, "embedding": EMBEDDER.embed([query])[0], "embedding_model": EMBEDDER.model, **arguments}
    )
    return store.catalog.semantic_search(request)


# ---------------------------------------------------------------------------- search_wines: which wines


@pytest.mark.parametrize(
    ("filters", "predicate"),
    [
        ({"wine_type": "rose"}, lambda w: w["wine_type"] == "rose"),
        ({"sweetness": "semi_sweet"}, lambda w: w["sweetness"] == "semi_sweet"),
        ({"price_max": 1000}, lambda w: w["price_rub"] <= 1000),
        ({"price_min": 20000}, lambda w: w["price_rub"] >= 20000),
        ({"country": "Грузия"}, lambda w: w["country"] == "Грузия"),
        ({"country": "USA"}, lambda w: w["country"] == "США"),
        ({"country": "американское"}, lambda w: w["country"] == "США"),
        ({"grape_variety": "Shiraz"}, lambda w: "Сира" in w["grape_varieties"]),
        ({"grape_variety": "саперави"}, lambda w: "Саперави" in w["grape_varieties"]),
        ({"region": "Tuscany"}, lambda w: w["region"].startswith("Тоскана")),
        ({"region": "Крым"}, lambda w: w["region"].startswith("Крым")),
        (
            {"wine_type": "white", "exclude_sweetness": "dry"},
            lambda w: w["wine_type"] == "white" and w["sweetness"] != "dry",
        ),
        (
            {"wine_type": "red", "exclude_country": "Франция"},
            lambda w: w["wine_type"] == "red" and w["country"] != "Франция",
        ),
        (  # «кроме Италии и Франции»: every country of the list (issue 38)
            {"wine_type": "red", "exclude_country": "Италия, Франция"},
            lambda w: w["wine_type"] == "red" and w["country"] not in ("Италия", "Франция"),
        ),
        (
            {"exclude_country": "Italy and France"},
            lambda w: w["country"] not in ("Италия", "Франция"),
        ),
        (
            {"wine_type": "sparkling", "exclude_grape": "шардоне"},
            lambda w: w["wine_type"] == "sparkling" and "Шардоне" not in w["grape_varieties"],
        ),
        (
            {"country": "Италия", "exclude_region": "Тоскана"},
            lambda w: w["country"] == "Италия" and not w["region"].startswith("Тоскана"),
        ),
        ({"wine_type": "red", "exclude_wine_type": "red"}, lambda w: w["wine_type"] == "red"),
    ],
    ids=lambda value: "-".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else "",
)
def test_a_filter_finds_exactly_its_wines(catalogue, shipped_wines, filters, predicate):
    result = everything(catalogue, **filters)
    expected = shipped(shipped_wines, predicate)
    assert result.matched == len(expected)
    if len(expected) <= 20:
        assert sorted(names(result)) == expected
    else:
        assert set(names(result)) <= set(expected)


def test_a_region_is_whole_words_of_the_place(catalogue, shipped_wines):
    """«Асти» is a word of «Asti DOCG», not a part of «Кастилия»; «Напа» is not inside «Анапа»."""
    assert set(names(everything(catalogue, region="Асти"))) == {"Asti"}
    assert "Rueda Verdejo" not in names(everything(catalogue, region="Асти"))
    assert names(everything(catalogue, region="Напа")) == ["Opus One"]


def test_a_name_is_found_in_either_alphabet_and_misspelt(catalogue):
    assert names(search(catalogue, name="Шато Линч-Баж"))[0] == "Château Lynch-Bages"
    assert names(search(catalogue, name="Sassicaia"))[0] == "Sassicaia"
    assert names(search(catalogue, name="сассикайя"))[0] == "Sassicaia"
    assert names(search(catalogue, name="Брунелло ди Монтальчино"))[0] == "Brunello di Montalcino"
    assert search(catalogue, name="Petrus Pomerol").matched == 0


def test_a_dish_finds_the_wines_paired_with_it(catalogue, shipped_wines):
    result = everything(catalogue, food_pairing="устрицы")
    assert result.wines
    for wine in result.wines:
        assert wine.food_pairings, wine.name  # found by its pairing, or by its style for a wine listed without


def test_a_dish_the_vocabulary_does_not_know_is_looked_for_among_the_pairings(empty):
    row = _row("Пробное", "Тест", food_pairings=["кулебяка с вязигой"])
    empty.catalog.import_wines([row])
    assert names(search(empty, food_pairing="кулебяка")) == ["Пробное"]
    assert search(empty, food_pairing="расстегай").matched == 0


def test_only_available_wines_are_found(backend):
    first = search(backend, name="Sassicaia").wines[0]
    rows = [_row_from_export(w) for w in backend.catalog.export_wines() if w.id != first.id]
    backend.catalog.import_wines(rows, replace=True)
    assert search(backend, name="Sassicaia").matched == 0
    assert backend.catalog.get_wines([first.id]).wines[0].available is False


def test_excluded_ids_are_left_out_and_unknown_ones_change_nothing(catalogue):
    first = search(catalogue, wine_type="red")
    again = search(catalogue, wine_type="red", exclude_ids=[w.id for w in first.wines])
    assert not {w.id for w in first.wines} & {w.id for w in again.wines}
    assert again.matched == first.matched - len(first.wines)
    assert names(search(catalogue, wine_type="red", exclude_ids=[str(uuid.uuid4())])) == names(first)


def test_contradictory_filters_find_nothing(catalogue):
    result = search(catalogue, wine_type="rose", price_min=50000)
    assert (result.found, result.matched, result.wines) == (0, 0, [])


# ---------------------------------------------------------------------------- search_wines: the orders


def _typical(price: float) -> float:
    return abs(math.log(price) - math.log(TYPICAL_PRICE))


def test_without_a_price_the_wines_nearest_a_typical_price_come_first(catalogue, shipped_wines):
    result = search(catalogue, wine_type="white", limit=20)
    distances = [_typical(w.price_rub) for w in result.wines]
    assert distances == sorted(distances)


def test_a_budget_lists_the_best_it_buys_first_and_a_floor_the_cheapest(catalogue):
    dearest = [w.price_rub for w in search(catalogue, price_max=3000, limit=20).wines]
    assert dearest == sorted(dearest, reverse=True) and max(dearest) <= 3000
    cheapest = [w.price_rub for w in search(catalogue, price_min=3000, limit=20).wines]
    assert cheapest == sorted(cheapest) and min(cheapest) >= 3000


@pytest.mark.parametrize("sort", ["price_desc", "price_asc"])
def test_an_asked_order_wins(catalogue, sort):
    prices = [w.price_rub for w in search(catalogue, wine_type="red", price_max=3000, sort=sort, limit=20).wines]
    assert prices == sorted(prices, reverse=sort == "price_desc")


def test_ties_are_broken_by_id_so_the_order_is_stable(catalogue):
    first = [w.id for w in search(catalogue, wine_type="sparkling", limit=20).wines]
    assert first == [w.id for w in search(catalogue, wine_type="sparkling", limit=20).wines]
    same_price = [w for w in search(catalogue, price_min=899, price_max=899, limit=20).wines]
    assert len(same_price) >= 2
    assert [w.id for w in same_price] == sorted(w.id for w in same_price)


def test_for_a_dish_the_wines_whose_style_suits_it_come_first(catalogue):
    """«стейк» suits red dry wines: among the pairing's wines those are listed before any other."""
    wines = search(catalogue, food_pairing="стейк", limit=20).wines
    suits = [w.wine_type == "red" and w.sweetness == "dry" for w in wines]
    assert suits == sorted(suits, reverse=True)


# ---------------------------------------------------------------------------- search_wines: the answer


def test_limit_found_matched_and_the_filters_applied(catalogue, shipped_wines):
    result = search(catalogue, wine_type="red", country="USA", price_max=100000, limit=2)
    assert result.found == len(result.wines) == 2
    assert result.matched == len(shipped(shipped_wines, lambda w: w["wine_type"] == "red" and w["country"] == "США"))
    assert result.filters_applied == {"wine_type": "red", "country": "США", "price_max": 100000}
    assert result.matched_more is False
    assert len(search(catalogue, limit=500).wines) == 20  # clamped to the most a call may ask


def test_an_enum_value_outside_the_enum_is_ignored_and_a_wrong_type_refused(catalogue):
    result = catalogue.catalog.run_llm_tools(
        [
            ToolRequest("search_wines", {"wine_type": "оранжевое", "limit": 3}),
            ToolRequest("search_wines", {"price_max": {"a": 1}}),
        ]
    )
    assert isinstance(result[0], SearchResult) and "wine_type" not in result[0].filters_applied
    assert isinstance(result[1], InvalidArgument)


def test_the_wines_carry_the_tools_view_and_their_photos_beside_it(catalogue, shipped_wines):
    result = search(catalogue, name="Malbec")
    wine = result.wines[0]
    assert wine.region == "Мендоса, Аргентина"  # the place as a caption reads it
    assert wine.image_key is None and wine.available is None  # not the model's to read
    assert result.photos[wine.id].image_key and result.wines_with_photos()[0].image_key


def test_the_tool_calls_of_one_turn_run_together_as_one_invocation(catalogue):
    before = catalogue.repositories.counter.count
    query = "лёгкое белое к рыбе"
    results = catalogue.catalog.run_llm_tools(
        [
            ToolRequest("search_wines", {"wine_type": "white"}),
            ToolRequest("semantic_search", {"query": query}),  # no embedding: its own error
            ToolRequest(
                "semantic_search",
                {"query": query, "embedding": EMBEDDER.embed([query])[0], "embedding_model": EMBEDDER.model},
            ),
        ]
    )
    assert catalogue.repositories.counter.count == before + 1
    assert isinstance(results[0], SearchResult) and isinstance(results[2], SearchResult)
    assert isinstance(results[1], PortError) and not isinstance(results[1], SearchResult)


# ---------------------------------------------------------------------------- semantic_search


def test_semantic_search_ranks_by_meaning_within_the_filters(catalogue):
    result = semantic(catalogue, "игристое на праздник", wine_type="sparkling", price_max=5000)
    assert result.wines and all(w.wine_type == "sparkling" and w.price_rub <= 5000 for w in result.wines)
    scores = [w.similarity_score for w in result.wines]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)


def test_semantic_search_reads_the_constraints_its_words_state_when_none_are_given(catalogue):
    result = semantic(catalogue, "американское вино к барбекю", limit=10)
    assert result.read_from_query == ["country"]
    assert {w.region.rsplit(", ", 1)[-1] for w in result.wines} == {"США"}
    given = semantic(catalogue, "американское вино к барбекю", wine_type="rose")
    assert given.read_from_query == []  # the caller's filters win


def test_hybrid_search_answers_at_most_the_limit_within_the_filters(catalogue):
    result = semantic(catalogue, "Мальбек из Мендосы", hybrid=True, wine_type="red", limit=3)
    assert 0 < len(result.wines) <= 3 and all(w.wine_type == "red" for w in result.wines)
    assert "Malbec" in names(result)


def test_a_query_of_another_embedding_model_is_refused(catalogue):
    request = semantic_request({"query": "вино", "embedding": EMBEDDER.embed(["вино"])[0], "embedding_model": "other"})
    with pytest.raises(InvalidArgument, match="embedded with 'other'"):
        catalogue.catalog.semantic_search(request)


# ---------------------------------------------------------------------------- reads by id, lists, figures


def test_wines_by_id_in_the_order_asked_with_the_missing_ones(catalogue):
    ids = [w.id for w in search(catalogue, wine_type="rose", limit=3).wines]
    unknown = str(uuid.uuid4())
    found = catalogue.catalog.get_wines([ids[2], unknown, ids[0]])
    assert [w.id for w in found.wines] == [ids[2], ids[0]] and found.missing == [unknown]
    assert found.wines[0].available is True and found.wines[0].country
    with pytest.raises(InvalidArgument):
        catalogue.catalog.get_wines(["not-an-id"])


def test_the_fallback_list_interleaves_the_types(catalogue):
    wines = catalogue.catalog.fallback_list(limit=8)
    assert [w.wine_type for w in wines[:4]] == sorted({"red", "white", "rose", "sparkling"})
    assert len(wines) == 8 and all(w.image_key for w in wines)  # with their photos
    rest = catalogue.catalog.fallback_list(limit=50, exclude_ids=[w.id for w in wines])
    assert not {w.id for w in wines} & {w.id for w in rest}


def test_stats_count_the_catalogue(catalogue, shipped_wines):
    stats = catalogue.catalog.stats()
    prices = sorted(w["price_rub"] for w in shipped_wines)
    assert (stats.wines, stats.available, stats.unavailable) == (len(shipped_wines), len(shipped_wines), 0)
    assert stats.by_type == {"red": 26, "white": 18, "sparkling": 12, "rose": 8}
    assert stats.by_country["Франция"] == 13 and sum(stats.by_country.values()) == len(shipped_wines)
    assert stats.price_rub is not None and (stats.price_rub.min, stats.price_rub.max) == (prices[0], prices[-1])
    assert stats.price_rub.median == (prices[31] + prices[32]) / 2
    assert stats.embedding_models == {EMBEDDER.model: len(shipped_wines)}
    appellation = stats.coverage["appellation"]
    assert appellation.given == sum(1 for w in shipped_wines if w.get("appellation"))
    assert appellation.unknown + appellation.inferred == sum(1 for w in shipped_wines if not w.get("appellation"))


def test_the_listing_and_the_export_are_ordered_by_producer_and_name(catalogue, shipped_wines):
    listing = catalogue.catalog.list_wines(limit=10)
    assert [(w.producer, w.name) for w in listing] == sorted((w["producer"], w["name"]) for w in shipped_wines)[:10]
    exported = catalogue.catalog.export_wines()
    assert len(exported) == len(shipped_wines)
    assert [(w.producer, w.name) for w in exported] == sorted((w["producer"], w["name"]) for w in shipped_wines)


# ---------------------------------------------------------------------------- writes


def _row(name: str, producer: str, **fields) -> ImportRow:
    values = {"wine_type": "red", "sweetness": "dry", "price_rub": 1500, "country": "Италия", **fields}
    return ImportRow(WineRecord.model_validate({"name": name, "producer": producer, **values}))


def _row_from_export(wine) -> ImportRow:
    return ImportRow(WineRecord.model_validate({k: v for k, v in wine.as_file_row().items() if v is not None}))


def test_an_import_inserts_then_updates_by_id_sku_and_name(empty):
    first = empty.catalog.import_wines([_row("Вино А", "Дом", sku="A-1"), _row("Вино Б", "Дом", vintage_year=2020)])
    assert (first.inserted, first.updated, first.total, first.retired) == (2, 0, 2, 0)
    again = empty.catalog.import_wines(
        [_row("Вино А, новое имя", "Дом", sku="A-1", price_rub=990), _row("Вино Б", "Дом", vintage_year=2020)]
    )
    assert (again.inserted, again.updated) == (0, 2) and again.ids == first.ids
    wines = empty.catalog.get_wines(first.ids).wines
    assert (wines[0].name, wines[0].price_rub) == ("Вино А, новое имя", 990)
    by_id = empty.catalog.import_wines(
        [ImportRow(_row("Вино В", "Дом").record.model_copy(update={"id": first.ids[1]}))]
    )
    assert by_id.ids == [first.ids[1]] and by_id.updated == 1
    assert empty.catalog.get_wines([first.ids[1]]).wines[0].name == "Вино В"


def test_an_import_is_all_or_nothing(empty):
    _, second = empty.catalog.import_wines([_row("Вино А", "Дом", sku="A-1"), _row("Вино Б", "Дом", sku="B-1")]).ids
    clash = ImportRow(_row("Вино Б", "Дом", sku="A-1").record.model_copy(update={"id": second}))  # A's sku
    with pytest.raises(InvalidArgument, match="nothing imported; row 2"):
        empty.catalog.import_wines([_row("Вино Г", "Дом"), clash, _row("Вино Е", "Дом")])
    assert [(w.name, w.sku) for w in empty.catalog.list_wines()] == [("Вино А", "A-1"), ("Вино Б", "B-1")]
    with pytest.raises(InvalidArgument):
        empty.catalog.import_wines([])


def test_a_replacing_import_retires_every_wine_it_did_not_write(backend, shipped_wines):
    kept = _row_from_export(backend.catalog.export_wines()[0])
    summary = backend.catalog.import_wines([kept, _row("Новое", "Дом")], replace=True)
    assert summary.retired == len(shipped_wines) - 1 and (summary.inserted, summary.updated) == (1, 1)
    stats = backend.catalog.stats()
    assert (stats.available, stats.unavailable) == (2, len(shipped_wines) - 1)
    later = backend.catalog.import_wines([_row("Ещё", "Дом")], replace=True, replace_since=summary.started_at)
    assert later.retired == 0  # what the import's earlier chunk wrote is kept
    assert len(backend.catalog.export_wines(include_unavailable=True)) == len(shipped_wines) + 2


def test_a_new_photo_forgets_the_telegram_file_id(empty):
    (wine_id,) = empty.catalog.import_wines([_row("Фото", "Дом", image_key="wines/a.png")]).ids
    empty.chat.remember_photo(wine_id, "FILE-1")
    assert empty.catalog.get_wines([wine_id]).wines[0].telegram_file_id == "FILE-1"
    empty.catalog.import_wines([_row("Фото", "Дом", image_key="wines/a.png")])
    assert empty.catalog.get_wines([wine_id]).wines[0].telegram_file_id == "FILE-1"
    empty.catalog.import_wines([_row("Фото", "Дом", image_key="wines/b.png")])
    wine = empty.catalog.get_wines([wine_id]).wines[0]
    assert (wine.image_key, wine.telegram_file_id) == ("wines/b.png", None)


def test_the_embeddings_are_read_and_rewritten(empty):
    ids = empty.catalog.import_wines([_row("Вино А", "Дом"), _row("Вино Б", "Дом")]).ids
    texts = empty.catalog.embedding_texts()
    assert {t.id for t in texts} == set(ids) and all("Вино" in t.text for t in texts)
    from sommelier.domain.catalog_writes import WineEmbedding

    vectors = EMBEDDER.embed([t.text for t in texts])
    assert (
        empty.catalog.update_embeddings(
            "test-model", [WineEmbedding(t.id, v) for t, v in zip(texts, vectors, strict=True)]
        )
        == 2
    )
    assert empty.catalog.stats().embedding_models == {"test-model": 2}
    with pytest.raises(InvalidArgument):
        empty.catalog.update_embeddings("test-model", [WineEmbedding(ids[0], [0.0, 1.0])])
