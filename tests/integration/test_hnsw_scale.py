"""At 10k wines the semantic_search SQL uses the HNSW index (ix_wines_embedding_hnsw).

10 000 random unit vectors (six planted near wine 1) tagged with the local model are loaded
with binary COPY. Inserting into a live HNSW index row by row takes minutes, so the index is
dropped for the load and rebuilt from its own definition (pg_get_indexdef), which is what a
bulk load in production does too. The SQL that is EXPLAINed is the one semantic_search really sends: a psycopg
cursor subclass records it while the real function runs against the real database.
"""

from __future__ import annotations

import time

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector
from sommelier.domain.search import semantic_request
from sommelier.domain.wire import to_wire
from sommelier.embeddings.local import LOCAL_MODEL_NAME
from sommelier.toolfn import search
from sommelier.toolfn.handler import handle

ROWS = 10_000
DIMENSIONS = 1536
INDEX = "ix_wines_embedding_hnsw"
TYPES = ("red", "white", "rose", "sparkling")
COLUMNS = (
    "name",
    "producer",
    "country",
    "region",
    "grape_varieties",
    "wine_type",
    "sweetness",
    "body",
    "tannins",
    "acidity",
    "price_rub",
    "description",
    "food_pairings",
    # the normalised columns the importer writes (every synthetic row has the same country, grape, pairing)
    "country_code",
    "grape_keys",
    "food_categories",
    "embedding",
    "embedding_model",
)
PG_TYPES = (
    "text",
    "text",
    "text",
    "text",
    "text[]",
    "text",
    "text",
    "int2",
    "int2",
    "int2",
    "numeric",
    "text",
    "text[]",
    "text",
    "text[]",
    "text[]",
    "vector",
    "text",
)


class RecordingCursor(psycopg.Cursor):
    """A plain psycopg cursor that also remembers what it executed."""

    statements: list[tuple[str, object]] = []

    def execute(self, query, params=None, **kwargs):
        RecordingCursor.statements.append((query, params))
        return super().execute(query, params, **kwargs)


# Rows planted around wine 1 at falling cosine similarity (about 0.93 down to 0.58), all white
# and under 8000 ₽. Between random 1536-d vectors every similarity is 0 ± 0.08, so without them
# "the true neighbours" of wine 1 would be noise that an approximate index finds only by luck.
PLANTED_NEAR_ONE = (5, 9, 13, 17, 21, 25)


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def _unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = _unit(rng.standard_normal((count, DIMENSIONS)).astype(np.float32))
    for step, row in enumerate(PLANTED_NEAR_ONE):
        spread = 0.4 + 0.2 * step
        vectors[row] = _unit(vectors[1] + spread * vectors[row])
    return vectors


@pytest.fixture(scope="module")
def big_catalogue(admin_url, empty_template):
    """A private database with 10 000 synthetic wines, the HNSW index built, statistics fresh."""
    import uuid

    from sommelier.db.pool import Database

    name = f"som_hnsw_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{empty_template}"')
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    info["dbname"] = name
    url = psycopg.conninfo.make_conninfo(**info)

    rng = np.random.default_rng(20240601)
    vectors = _unit_vectors(rng, ROWS)
    started = time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        definition = conn.execute("SELECT pg_get_indexdef(%s::regclass)", (INDEX,)).fetchone()[0]
        conn.execute(f"DROP INDEX {INDEX}")
        with (
            conn.cursor() as cur,
            cur.copy(f"COPY wines ({', '.join(COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)") as copy,
        ):
            copy.set_types(list(PG_TYPES))
            for i in range(ROWS):
                copy.write_row(
                    (
                        f"Synthetic {i:05d}",
                        f"Producer {i % 97}",
                        "Италия",
                        "Тоскана",
                        ["Санджовезе"],
                        TYPES[i % 4],
                        "dry",
                        1 + i % 5,
                        1 + i % 5,
                        1 + i % 5,
                        300 + (i * 37) % 20000,
                        "synthetic wine",
                        ["сыр"],
                        "IT",
                        ["санджовезе"],
                        ["выдержанный сыр", "мягкий сыр"],
                        vectors[i],
                        LOCAL_MODEL_NAME,
                    )
                )
        conn.execute("SET maintenance_work_mem = '256MB'")
        conn.execute(definition)  # the migration's own index, rebuilt after the bulk load
        conn.execute("ANALYZE wines")
    database = Database(url)
    yield {
        "database": database,
        "url": url,
        "vectors": vectors,
        "definition": definition,
        "load_seconds": time.monotonic() - started,
    }
    database.close()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _recorded_semantic_sql(url: str, arguments: dict) -> tuple[str, object, dict]:
    """Run the real semantic_search and return the SELECT it sent, its parameters and its answer."""
    RecordingCursor.statements.clear()
    with psycopg.connect(url, cursor_factory=RecordingCursor) as conn:
        register_vector(conn)
        answer = to_wire(search.semantic_search(conn, semantic_request(arguments)))  # the tool function's JSON
    selects = [(q, p) for q, p in RecordingCursor.statements if "ORDER BY" in str(q) and "<=>" in str(q)]
    assert len(selects) == 1, RecordingCursor.statements
    return selects[0][0], selects[0][1], answer


def _plan(url: str, query: str, params) -> str:
    with psycopg.connect(url) as conn:
        register_vector(conn)
        with conn.transaction():
            for setting in search.SEMANTIC_SEARCH_SETTINGS:  # as semantic_search does
                conn.execute(setting)
            rows = conn.execute("EXPLAIN " + query, params).fetchall()
    return "\n".join(row[0] for row in rows)


def _arguments(vector, **filters) -> dict:
    return {
        "query": "synthetic",
        "embedding": [float(x) for x in vector],
        "embedding_model": LOCAL_MODEL_NAME,
        **filters,
    }


def test_catalogue_has_10k_wines_and_the_index(big_catalogue):
    with big_catalogue["database"].connection() as conn:
        assert conn.execute("SELECT count(*) FROM wines").fetchone()[0] == ROWS
        indexdef = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (INDEX,)).fetchone()[0]
    assert "USING hnsw (embedding vector_cosine_ops)" in indexdef
    assert indexdef == big_catalogue["definition"]


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"wine_type": "red"},
        {"price_max": 5000},
        pytest.param({"wine_type": "white", "price_max": 20000}),
    ],
    ids=["no-filter", "wine_type", "price_max", "type-and-loose-price"],
)
def test_semantic_search_sql_uses_the_hnsw_index(big_catalogue, filters):
    query, params, answer = _recorded_semantic_sql(
        big_catalogue["url"], _arguments(big_catalogue["vectors"][1], **filters)
    )
    assert "LIMIT" in query
    plan = _plan(big_catalogue["url"], query, params)
    assert f"Index Scan using {INDEX}" in plan, plan
    assert "Seq Scan" not in plan, plan
    assert answer["found"] == 5


def test_selective_filters_may_scan_exactly_and_stay_correct(big_catalogue):
    """With few rows left after the filters (here ~8%), PostgreSQL may prefer the btree index and an
    exact sort to the HNSW graph. Either plan is fine as long as the answer is the true nearest."""
    vectors = big_catalogue["vectors"]
    query, params, answer = _recorded_semantic_sql(
        big_catalogue["url"], _arguments(vectors[1], wine_type="white", price_max=8000, limit=5)
    )
    plan = _plan(big_catalogue["url"], query, params)
    prices = 300 + (np.arange(ROWS) * 37) % 20000
    keep = (np.arange(ROWS) % 4 == 1) & (prices <= 8000)
    assert keep[1]  # the query is itself a white wine under 8000, so it must come first
    assert keep[list(PLANTED_NEAR_ONE)].all()
    best = [f"Synthetic {i:05d}" for i in np.argsort(-np.where(keep, vectors @ vectors[1], -np.inf))[:5]]
    names = [w["name"] for w in answer["wines"]]
    assert names[0] == "Synthetic 00001" and answer["wines"][0]["similarity_score"] == pytest.approx(1.0, abs=1e-4)
    assert all(w["wine_type"] == "white" and w["price_rub"] <= 8000 for w in answer["wines"])
    assert best == ["Synthetic 00001"] + [f"Synthetic {i:05d}" for i in PLANTED_NEAR_ONE[:4]]
    if INDEX in plan:  # approximate by design, but neighbours this clear must be found
        assert len(set(names) & set(best)) >= 4, (names, best)
    else:  # an exact scan: exactly the true neighbours
        assert names == best


def test_planted_wine_is_found_first_through_the_index(big_catalogue):
    vectors = big_catalogue["vectors"]
    for i in (0, 4321, ROWS - 1):
        result = handle(
            {"tool": "semantic_search", "arguments": _arguments(vectors[i], limit=5)}, big_catalogue["database"]
        )
        assert result["wines"][0]["name"] == f"Synthetic {i:05d}"
        assert result["wines"][0]["similarity_score"] == pytest.approx(1.0, abs=1e-4)
        scores = [w["similarity_score"] for w in result["wines"]]
        assert scores == sorted(scores, reverse=True)


def test_filters_hold_and_fill_the_page_at_scale(big_catalogue):
    """The iterative index scan keeps going until enough rows pass a selective filter."""
    vector = big_catalogue["vectors"][2]  # a rose; ask for reds under a low price
    result = handle(
        {"tool": "semantic_search", "arguments": _arguments(vector, wine_type="red", price_max=1500, limit=20)},
        big_catalogue["database"],
    )
    assert result["found"] == 20
    assert all(w["wine_type"] == "red" and w["price_rub"] <= 1500 for w in result["wines"])


def _recorded_search_sql(url: str, arguments: dict) -> tuple[str, object]:
    from sommelier.domain.search import search_filters

    RecordingCursor.statements.clear()
    with psycopg.connect(url, cursor_factory=RecordingCursor) as conn:
        register_vector(conn)
        search.search_wines(conn, search_filters(arguments))
    # the ordered SELECT (search_wines counts the matches first)
    (statement,) = [(q, p) for q, p in RecordingCursor.statements if "FROM wines" in str(q) and "ORDER BY" in str(q)]
    return statement


def test_search_wines_price_filter_is_an_index_condition(big_catalogue):
    query, params = _recorded_search_sql(big_catalogue["url"], {"price_max": 1000, "limit": 5})
    plan = _plan(big_catalogue["url"], query, params)
    assert "double precision" not in plan, plan
    assert "Index Cond: (price_rub <=" in plan.replace("w.price_rub", "price_rub"), plan


def test_search_wines_filters_hold_at_scale(big_catalogue):
    result = handle(
        {
            "tool": "search_wines",
            "arguments": {
                "wine_type": "red",
                "price_max": 1000,
                "region": "тоскана",
                "food_pairing": "сыр",
                "limit": 20,
            },
        },
        big_catalogue["database"],
    )
    assert result["found"] == 20
    assert all(w["wine_type"] == "red" and w["price_rub"] <= 1000 for w in result["wines"])
    prices = [w["price_rub"] for w in result["wines"]]
    assert prices == sorted(prices, reverse=True)  # the best the budget buys first


@pytest.mark.parametrize(
    "filters",
    [{"food_pairing": "сыр"}, {"grape_variety": "санджовезе"}, {"country": "Italy"}],
    ids=["food", "grape", "country"],
)
def test_search_wines_default_order_walks_the_typical_price_index(big_catalogue, filters):
    """Without a price filter the wines nearest 2000 ₽ come first. Migration 0003 indexes that order,
    so PostgreSQL stops at the LIMIT-th match instead of filtering and sorting the whole table."""
    query, params = _recorded_search_sql(big_catalogue["url"], {**filters, "limit": 5})
    plan = _plan(big_catalogue["url"], query, params)
    assert "ix_wines_typical_price_distance" in plan, plan
    assert "Sort" not in plan, plan
    answer = handle({"tool": "search_wines", "arguments": {**filters, "limit": 5}}, big_catalogue["database"])
    prices = 300 + (np.arange(ROWS) * 37) % 20000
    nearest = sorted(abs(np.log(p) - np.log(2000)) for p in prices)[:5]
    got = [abs(np.log(w["price_rub"]) - np.log(2000)) for w in answer["wines"]]
    if "food_pairing" in filters:
        # a dish the style table knows lists the wines whose style suits it first (docs/matching.md § 14),
        # each walk in the typical-price order
        assert len(got) == 5 and got == sorted(got)
    else:
        assert got == pytest.approx(nearest)


@pytest.mark.parametrize(
    ("filters", "condition", "order"),
    [
        (
            {"exclude_wine_type": "red", "exclude_sweetness": "sweet", "sort": "price_desc"},
            "wine_type <> 'red' AND sweetness <> 'sweet'",
            "price_rub DESC",
        ),
        (
            {"wine_type": "white", "exclude_sweetness": "semi_dry", "sort": "price_asc"},
            "wine_type = 'white'",
            "price_rub ASC",
        ),
    ],
    ids=["not-red-not-sweet-dearest", "white-not-semi-dry-cheapest"],
)
def test_a_price_order_with_a_style_ruled_out_lists_the_true_extremes(big_catalogue, filters, condition, order):
    """Many wines match and the order is by price: the same wines, in the same order, as plain SQL over the table."""
    result = handle({"tool": "search_wines", "arguments": {**filters, "limit": 12}}, big_catalogue["database"])
    with psycopg.connect(big_catalogue["url"]) as conn:
        expected = conn.execute(
            f"SELECT name FROM wines WHERE available AND {condition} ORDER BY {order}, id LIMIT 12"  # nosec B608 - test constants
        ).fetchall()
    assert [w["name"] for w in result["wines"]] == [row[0] for row in expected]
    assert result["matched"] >= 12
