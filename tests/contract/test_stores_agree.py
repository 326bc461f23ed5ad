"""The in-memory catalogue against PostgreSQL itself, where the contract fixes the answer: a battery of
searches must answer the same wines in the same order from both stores, and the Python sound key
(sommelier_dev/memory/sound.py) must find what the SQL functions of migrations 0010 and 0011 find.

Every test here needs the database (both stores at once); the per-store contract is in the other modules.
"""

from __future__ import annotations

import json
import random

import pytest
from sommelier.domain.search import search_filters, semantic_request
from sommelier.domain.wire import to_wire
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.repositories.adapters import in_process_repositories
from sommelier_dev.memory import memory_repositories, sound

EMBEDDER = LocalHashingEmbeddings()

VALUES = {
    "wine_type": ["red", "white", "rose", "sparkling"],
    "sweetness": ["dry", "semi_dry", "semi_sweet", "sweet"],
    "price_max": [1000, 1500, 2000, 3000, 5000],
    "price_min": [1000, 2000, 3000, 5000],
    "grape_variety": ["мальбек", "каберне", "пино нуар", "Шираз", "шардоне", "pinot grigio", "рислинг", "Sangiovese"],
    "country": ["Италия", "Франция", "США", "американское", "Россия", "Испания", "Грузия", "Нарния"],
    "region": ["Тоскана", "Tuscany", "Бордо", "Риоха", "Крым", "Пьемонт", "Кьянти", "Barolo", "Напа", "Шампань"],
    "food_pairing": ["стейк", "рыба", "сыр", "паста", "утка", "морепродукты", "десерт", "шашлык", "устрицы", "борщ"],
    "name": ["Шато Латур", "Malbec", "Кьянти Классико", "Луиджи Боска", "просекко", "Cloudy Bay", "Моэт", "Латура"],
    "exclude_country": ["Италия", "Франция", "Италия, Франция", "Испания, США, Чили"],
    "exclude_sweetness": ["dry", "sweet"],
    "exclude_wine_type": ["red", "white"],
    "exclude_grape": ["шардоне", "мерло"],
    "exclude_region": ["Кьянти", "Тоскана", "Бордо"],
    "sort": ["price_desc", "price_asc", "relevance"],
    "limit": [1, 5, 20],
}


def _cases() -> list[dict]:
    """Every filter value alone, then 150 random combinations of two to four (a fixed seed)."""
    chance = random.Random(34)
    cases: list[dict] = [{}] + [{key: value} for key, values in VALUES.items() for value in values]
    for _ in range(150):
        keys = chance.sample(sorted(VALUES), chance.choice([2, 3, 4]))
        cases.append({key: chance.choice(VALUES[key]) for key in keys})
    return cases


@pytest.fixture(scope="module")
def stores(catalog_db, memory_template):
    """The shipped catalogue in both stores, the memory copy's wines under the database's ids (the id breaks
    ties in either order, so the two must share them)."""
    postgres = in_process_repositories(catalog_db)
    store = memory_template.copy()
    ids = {(w.name, w.producer, w.vintage_year): w.id for w in postgres.catalog.export_wines(include_unavailable=True)}
    rows = list(store.wines.values())
    store.wines = {}
    for row in rows:
        row.id = ids[(row.name, row.producer, row.vintage_year)]
        store.wines[row.id] = row
    return postgres, memory_repositories(store)


@pytest.mark.parametrize("case", _cases(), ids=lambda case: json.dumps(case, ensure_ascii=False))
def test_a_search_answers_the_same_in_both_stores(stores, case):
    postgres, memory = stores
    filters = search_filters(case)
    assert to_wire(memory.catalog.search_wines(filters)) == to_wire(postgres.catalog.search_wines(filters))


@pytest.mark.parametrize("query", ["лёгкое на летний вечер", "вино к стейку", "американское вино", "праздник"])
@pytest.mark.parametrize("filters", [{}, {"wine_type": "red"}, {"price_max": 2000}], ids=["none", "red", "budget"])
def test_a_semantic_search_answers_the_same_in_both_stores(stores, query, filters):
    postgres, memory = stores
    request = semantic_request(
        {"query": query, "embedding": EMBEDDER.embed([query])[0], "embedding_model": EMBEDDER.model, **filters}
    )
    assert to_wire(memory.catalog.semantic_search(request)) == to_wire(postgres.catalog.semantic_search(request))


def test_the_figures_listing_and_fallback_are_the_same_in_both_stores(stores):
    postgres, memory = stores
    for read in (
        lambda store: store.catalog.stats(),
        lambda store: store.catalog.export_wines(include_unavailable=True),
        lambda store: store.catalog.list_wines(),
        lambda store: store.catalog.fallback_list(limit=20),
        lambda store: store.catalog.embedding_texts(),
    ):
        assert to_wire(read(memory)) == to_wire(read(postgres))


NAMES = [
    "Château Latour",
    "Шато Латур",
    "Латура",
    "Moët & Chandon",
    "Saint-Julien",
    "d'Yquem",
    "Côtes du Rhône",
    "Кьянти Классико",
    "Брунелло ди Монтальчино",
    "небиоло",
    "санжовезе",
    "Montrose",
    "Монроз",
    "Contrada",
    "Шабли Премье Крю Вайон",
    "Гевюрцтраминер",
    "Sauvignon Blanc",
    "Совиньон Блан",
    "Vinho Verde",
    "Цимлянское игристое",
]


def test_the_sound_key_is_the_sql_one(catalog_db):
    with catalog_db.connection() as conn:
        rows = conn.execute("SELECT t, sommelier_sound(t) FROM unnest(%s::text[]) t", (NAMES,)).fetchall()
    assert {text: sound.sound(text) for text, _ in rows} == dict(rows)


def test_a_name_finds_what_the_sql_name_query_finds(catalog_db, shipped_wines):
    places = [" ".join((w["name"], w["producer"], w.get("appellation") or "", w["region"])) for w in shipped_wines]
    queries = NAMES + [w["name"] for w in shipped_wines] + [w["producer"] for w in shipped_wines]
    with catalog_db.connection() as conn:
        found = set(
            conn.execute(
                # each sounded once (a statement computing them for every pair outlasts its timeout)
                "WITH asked AS MATERIALIZED (SELECT q, sommelier_sound_query(q) AS query FROM unnest(%s::text[]) q),"
                " named AS MATERIALIZED (SELECT p, sommelier_sound_words(p) AS words FROM unnest(%s::text[]) p)"
                " SELECT q, p FROM asked, named WHERE words @@ query",
                (queries, places),
            ).fetchall()
        )
    assert found  # the battery finds something
    assert {(q, p) for q in queries for p in places if sound.name_query(q).matches(sound.sound_words(p))} == found
