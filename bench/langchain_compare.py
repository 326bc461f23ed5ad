"""`langchain`: side by side with the LangChain equivalent, in the same run, on the same data.

(a) Search: our `semantic_search` (through `handle()`) against langchain-postgres
    `PGVector.similarity_search_with_score`, k = 5, filter wine_type = red and price ≤ 3000 on both
    (`{"wine_type": {"$eq": "red"}, "price_rub": {"$lte": 3000}}` for PGVector, use_jsonb=True).
    The same wines (read back from our table: ids, metadata, the same float32 vectors) are loaded
    with `add_embeddings`, into the same database and server. Both get the same query vectors:
    ours in the tool event (the agent embeds), theirs from an Embeddings wrapper that returns the
    precomputed vector for the query text. PGVector creates no vector index, so three variants:
      A. as LangChain creates it (a GIN index on the metadata only);
      B. plus an HNSW index (vector_cosine_ops) we add on its embedding column, built with the
         same settings as ours (the column is typed vector(1536) via embedding_length=1536,
         so no cast is needed);
      C. B plus hnsw.iterative_scan = relaxed_order on its connections (what our query sets).
    Runs alternate ours/theirs. Besides latency: how many results come back and recall@5 against
    the exact filtered top 5 (sequential scan).
(b) Turn: our agent turn vs a LangChain tool-calling agent (bench/langchain_agent.py:
    `create_agent` + `ChatOpenAI` + two @tool functions calling our `handle()`), both on the same
    zero-latency FakeOpenAI script and the same catalogue; overhead = wall − time inside the SDK's
    HTTP exchanges for both (the same boundary).
(c) Cold import: functions/webhook/agent.py vs bench/langchain_agent.py in a fresh interpreter.
"""

from __future__ import annotations

import importlib.util
import time
from statistics import mean
from typing import Any

from bench.common import (
    LOCAL_MODEL,
    ROOT,
    Context,
    Figure,
    WineDatabase,
    figure,
    interleaved_latency_runs,
    log,
    median,
    p50s,
    percentile,
    query_vectors,
)

NAME = "langchain"
PACKAGES = {
    "langchain": "langchain",
    "langchain_core": "langchain-core",
    "langchain_openai": "langchain-openai",
    "langchain_postgres": "langchain-postgres",
    "sqlalchemy": "sqlalchemy",
}
FILTER = {"wine_type": {"$eq": "red"}, "price_rub": {"$lte": 3000}}
OUR_FILTER = {"wine_type": "red", "price_max": 3000}
K = 5
RATIO_TARGET = 3.0
COLLECTION = "wines"


def missing_packages() -> list[str]:
    return [dist for module, dist in PACKAGES.items() if importlib.util.find_spec(module) is None]


def skip_reason() -> str | None:
    missing = missing_packages()
    if not missing:
        return None
    return (
        f"LangChain packages missing ({', '.join(missing)}). Install them into this venv with: "
        f"pip install -r bench/requirements.txt && pip install --no-deps langchain-postgres "
        f"(see bench/README.md)"
    )


# ------------------------------------------------------------------------------------------ (a) search


def sqlalchemy_url(conninfo: str) -> str:
    """Our psycopg conninfo as the "postgresql+psycopg://" URL LangChain takes (Unix socket as ?host=)."""
    import psycopg
    from sqlalchemy.engine import URL

    info = psycopg.conninfo.conninfo_to_dict(conninfo)
    host = info.get("host")
    query = {}
    if host and host.startswith("/"):
        query["host"], host = host, None
    url = URL.create(
        "postgresql+psycopg",
        username=info.get("user"),
        password=info.get("password") or None,
        host=host,
        port=int(info["port"]) if info.get("port") else None,
        database=info.get("dbname"),
        query=query,
    )
    return url.render_as_string(hide_password=False)


def precomputed_embeddings(vectors: dict[str, list[float]]):
    from langchain_core.embeddings import Embeddings

    class PrecomputedEmbeddings(Embeddings):
        """The query vector is computed before the call, as our agent does before calling the tool."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [vectors[text] for text in texts]

        def embed_query(self, text: str) -> list[float]:
            return vectors[text]

    return PrecomputedEmbeddings()


def make_store(wdb: WineDatabase, vectors: dict[str, list[float]], *, iterative_scan: bool = False):
    from langchain_postgres import PGVector

    engine_args: dict[str, Any] = {}
    if iterative_scan:
        engine_args["connect_args"] = {"options": "-c hnsw.iterative_scan=relaxed_order"}
    return PGVector(
        embeddings=precomputed_embeddings(vectors),
        connection=sqlalchemy_url(wdb.url),
        collection_name=COLLECTION,
        use_jsonb=True,
        embedding_length=1536,
        engine_args=engine_args,
    )


def load_store(wdb: WineDatabase, store: Any, batch: int = 1000) -> float:
    """Every wine of our table into PGVector with add_embeddings: same ids, metadata and vectors."""
    import psycopg
    from pgvector.psycopg import register_vector

    started = time.perf_counter()
    with psycopg.connect(wdb.url) as conn:
        register_vector(conn)
        with conn.cursor(name="export_for_langchain", binary=True) as cur:
            cur.execute(
                "SELECT id, name, producer, country, region, wine_type, sweetness, price_rub, grape_varieties,"
                " food_pairings, description, embedding FROM wines ORDER BY id"
            )
            while rows := cur.fetchmany(batch):
                texts = [f"{r[1]}. {r[10]}" for r in rows]
                embeddings = [r[11].to_list() if hasattr(r[11], "to_list") else [float(x) for x in r[11]] for r in rows]
                metadatas = [
                    {
                        "wine_id": str(r[0]),
                        "name": r[1],
                        "producer": r[2],
                        "country": r[3],
                        "region": r[4],
                        "wine_type": r[5],
                        "sweetness": r[6],
                        "price_rub": float(r[7]),
                        "grape_varieties": list(r[8]),
                        "food_pairings": list(r[9]),
                    }
                    for r in rows
                ]
                store.add_embeddings(texts, embeddings, metadatas, ids=[str(r[0]) for r in rows])
    seconds = time.perf_counter() - started
    with psycopg.connect(wdb.url, autocommit=True) as conn:
        # as after our own load: no autovacuum/analyze of 100k fresh rows running during the measurements
        conn.execute("VACUUM (ANALYZE) langchain_pg_embedding")
    return seconds


def build_hnsw(wdb: WineDatabase) -> float:
    import os

    import psycopg

    started = time.perf_counter()
    with psycopg.connect(wdb.url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(f"SET max_parallel_maintenance_workers = {max(0, min(2, (os.cpu_count() or 1) - 1))}")
        conn.execute(
            "CREATE INDEX IF NOT EXISTS bench_langchain_embedding_hnsw ON langchain_pg_embedding "
            "USING hnsw (embedding vector_cosine_ops)"
        )
        conn.execute("VACUUM (ANALYZE) langchain_pg_embedding")
    return time.perf_counter() - started


def exact_top(wdb: WineDatabase, vector: list[float]) -> list[str]:
    import numpy as np

    with wdb.database.connection() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_indexscan = off")
        conn.execute("SET LOCAL enable_bitmapscan = off")
        rows = conn.execute(
            "SELECT id FROM wines WHERE wine_type = 'red' AND price_rub <= 3000 AND embedding_model = %s "
            "ORDER BY embedding <=> %s LIMIT %s",
            (LOCAL_MODEL, np.asarray(vector, dtype=np.float32), K),
        ).fetchall()
    return [str(r[0]) for r in rows]


def search_settings(ctx: Context, rows: int, variant: str) -> dict[str, int]:
    calls = 3 if ctx.smoke else 20 if ctx.quick else 100
    if variant == "A" and rows >= 100_000:
        calls = 20  # a sequential scan per query: keep the full run within its budget
    return {"calls": calls, "warmup": 5}


def compare_search(ctx: Context, wdb: WineDatabase) -> list[Figure]:
    from sommelier.toolfn.handler import handle

    label = wdb.label
    queries = [(f"q{i}", vector) for i, vector in enumerate(query_vectors(24, seed=11))]
    vectors = dict(queries)
    store = make_store(wdb, vectors)
    load_s = load_store(wdb, store)
    log(f"langchain: PGVector loaded {wdb.rows} wines with add_embeddings in {load_s:.1f} s")
    exact = {text: exact_top(wdb, vector) for text, vector in queries}
    events = [
        {
            "tool": "semantic_search",
            "arguments": {"query": text, "embedding": vector, "embedding_model": LOCAL_MODEL, **OUR_FILTER},
        }
        for text, vector in queries
    ]
    database = wdb.database
    outcome: dict[str, list[tuple[str, list[str]]]] = {"ours": [], "theirs": []}

    def ours(i: int) -> None:
        event = events[i % len(events)]
        answer = handle(event, database)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        outcome["ours"].append((event["arguments"]["query"], [w["id"] for w in answer["wines"]]))

    figures: list[Figure] = []
    details_common = {"wines": wdb.rows, "langchain_load_s": round(load_s, 1)}
    stores = [store]
    for variant, title in (
        ("A", "PGVector as created (no vector index)"),
        ("B", "PGVector + HNSW index"),
        ("C", "PGVector + HNSW + iterative scan"),
    ):
        variant_store = store
        if variant == "B":
            index_s = build_hnsw(wdb)
            details_common["langchain_hnsw_build_s"] = round(index_s, 1)
            log(f"langchain: HNSW index on langchain_pg_embedding built in {index_s:.1f} s")
        elif variant == "C":
            variant_store = make_store(wdb, vectors, iterative_scan=True)
            stores.append(variant_store)
        outcome = {"ours": [], "theirs": []}

        def theirs(i: int, store=variant_store, outcome=outcome) -> None:
            text = queries[i % len(queries)][0]
            found = store.similarity_search_with_score(text, k=K, filter=FILTER)
            outcome["theirs"].append((text, [doc.id for doc, _ in found]))

        cfg = search_settings(ctx, wdb.rows, variant)
        runs = interleaved_latency_runs({"ours": ours, "theirs": theirs}, runs=ctx.runs, **cfg)
        ours_p50, theirs_p50 = p50s(runs["ours"]), p50s(runs["theirs"])
        ratios = [t / o for t, o in zip(theirs_p50, ours_p50, strict=True)]

        def quality(name: str, outcome=outcome) -> dict[str, float]:
            results = outcome[name]
            recall = [len(set(ids) & set(exact[text])) / max(1, len(exact[text])) for text, ids in results]
            return {
                "mean_results": round(mean(len(ids) for _, ids in results), 2),
                "recall_at_5": round(mean(recall), 3),
            }

        details = {
            **details_common,
            "variant": title,
            "calls_per_run": cfg["calls"],
            "ours": quality("ours"),
            "theirs": quality("theirs"),
            "ours_p50_ms_runs": [round(v, 3) for v in ours_p50],
        }
        if variant == "A":
            figures.append(
                figure(
                    NAME,
                    f"search p50 @{label}: ours semantic_search",
                    "ms",
                    ours_p50,
                    details={"ours": details["ours"]},
                )
            )
        figures.append(figure(NAME, f"search p50 @{label}: {variant}. {title}", "ms", theirs_p50, details=details))
        figures.append(figure(NAME, f"search ratio @{label}: {variant} / ours", "×", ratios, at_least=RATIO_TARGET))
        log(
            f"langchain: search @{label} {variant}: ours p50 {median(ours_p50):.2f} ms, theirs "
            f"{median(theirs_p50):.2f} ms (×{median(ratios):.1f}); recall ours {details['ours']['recall_at_5']}, "
            f"theirs {details['theirs']['recall_at_5']}, theirs results {details['theirs']['mean_results']}"
        )
    for used in stores:
        engine = getattr(used, "_engine", None)
        if engine is not None:
            engine.dispose()
    return figures


# ------------------------------------------------------------------------------------------ (b) turn


class LangChainTurns:
    def __init__(self, database: Any, base_url: str):
        from bench.agent_harness import HttpTimer
        from bench.langchain_agent import build_agent

        self.agent, self.chat = build_agent(base_url=base_url, database=database)
        self.http = HttpTimer().attach(self.chat.root_client._client)

    def turn(self, text: str):
        from bench.agent_harness import TurnSample
        from bench.langchain_agent import run_turn

        self.http.take()
        started = time.perf_counter_ns()
        answer = run_turn(self.agent, text)
        wall = (time.perf_counter_ns() - started) / 1e6
        http_ms, http_calls = self.http.take()
        if answer.get("response_type") != "recommendation" or not answer.get("wines"):
            raise RuntimeError(f"unexpected LangChain answer: {str(answer)[:200]}")
        return TurnSample(
            wall_ms=wall, http_ms=http_ms, http_calls=http_calls, llm_calls=http_calls, recommended=len(answer["wines"])
        )


def compare_turns(ctx: Context) -> list[Figure]:
    from bench.agent_harness import TURN_TEXT, OurAgentTurns, start_fake_llm

    turns = 2 if ctx.smoke else 10 if ctx.quick else 40
    databases = ctx.db()
    wdb = databases.shipped_copy()
    fake = start_fake_llm()
    try:
        ours = OurAgentTurns(wdb.database, fake.base_url, chat_id=990001)
        theirs = LangChainTurns(wdb.database, fake.base_url)
        for _ in range(1 if ctx.smoke else 5 if ctx.quick else 8):
            ours.turn()
            theirs.turn(TURN_TEXT)
        samples: dict[str, list[list[Any]]] = {"ours": [], "theirs": []}
        for run in range(ctx.runs):
            order = ("ours", "theirs") if run % 2 == 0 else ("theirs", "ours")
            for name in order:
                if name == "ours":
                    samples[name].append([ours.turn() for _ in range(turns)])
                else:
                    samples[name].append([theirs.turn(TURN_TEXT) for _ in range(turns)])
    finally:
        fake.stop()
        wdb.close()
        databases.postgres.drop_database(wdb.name)

    def p50_of(name: str, value) -> list[float]:
        return [percentile([value(s) for s in run], 50) for run in samples[name]]

    ours_p50 = p50_of("ours", lambda s: s.overhead_ms)
    ours_lean = p50_of("ours", lambda s: s.overhead_ms - s.stages_ms.get("history", 0) - s.stages_ms.get("save", 0))
    theirs_p50 = p50_of("theirs", lambda s: s.overhead_ms)
    llm_calls = {name: mean(s.http_calls for run in samples[name] for s in run) for name in samples}
    details = {
        "turns_per_run": turns,
        "llm_calls_per_turn": llm_calls,
        "ours_stages_p50_ms": {
            k: round(median([s.stages_ms.get(k, 0.0) for r in samples["ours"] for s in r]), 3)
            for k in ("history", "tools", "save", "llm")
        },
        "langchain_wall_p50_ms": round(median(p50_of("theirs", lambda s: s.wall_ms)), 2),
        "ours_wall_p50_ms": round(median(p50_of("ours", lambda s: s.wall_ms)), 2),
    }
    ratio = [t / o for t, o in zip(theirs_p50, ours_p50, strict=True)]
    ratio_lean = [t / o for t, o in zip(theirs_p50, ours_lean, strict=True)]
    log(
        f"langchain: turn overhead p50 ours {median(ours_p50):.1f} ms, LangChain {median(theirs_p50):.1f} ms "
        f"(×{median(ratio):.1f})"
    )
    return [
        figure(NAME, "turn overhead p50: ours (wall − LLM HTTP)", "ms", ours_p50, details=details),
        figure(NAME, "turn overhead p50: LangChain create_agent", "ms", theirs_p50),
        figure(NAME, "turn overhead ratio: LangChain / ours", "×", ratio, at_least=RATIO_TARGET),
        figure(
            NAME,
            "turn overhead p50: ours without history load/save",
            "ms",
            ours_lean,
            note="our turn also loads and saves history; LangChain's agent does neither",
        ),
        figure(NAME, "turn overhead ratio: LangChain / ours without history", "×", ratio_lean),
    ]


# ------------------------------------------------------------------------------------------ (c) imports


def compare_imports(ctx: Context) -> list[Figure]:
    from bench import imports

    shared = ctx.shared.get("imports", {})
    if "webhook/agent.py" in shared and "langchain_agent" in shared:
        ours, theirs = shared["webhook/agent.py"]["runs"], shared["langchain_agent"]["runs"]
        source = "the imports benchmark of this run"
    else:
        n = imports.repeats(ctx)
        imports.import_once(imports.HANDLERS["webhook/agent.py"])
        imports.import_once(imports.LANGCHAIN_AGENT)
        ours = imports.measure(imports.HANDLERS["webhook/agent.py"], n)["import_ms"]
        theirs = imports.measure(imports.LANGCHAIN_AGENT, n)["import_ms"]
        source = "measured here"
    ratio = [t / o for t, o in zip(theirs, ours, strict=False)]
    log(
        f"langchain: cold import ours {median(ours):.0f} ms, LangChain agent module {median(theirs):.0f} ms "
        f"(×{median(ratio):.1f})"
    )
    return [
        figure(NAME, "cold import: ours functions/webhook/agent.py", "ms", ours, note=source),
        figure(NAME, "cold import: bench/langchain_agent.py", "ms", theirs, note=source),
        figure(NAME, "cold import ratio: LangChain / ours", "×", ratio),
    ]


def run(ctx: Context) -> list[Figure]:
    figures: list[Figure] = []
    databases = ctx.db()
    for rows in ctx.sizes():
        figures += compare_search(ctx, databases.synthetic(rows))
    figures += compare_turns(ctx)
    figures += compare_imports(ctx)
    ctx.shared[NAME] = {f.metric: f.median for f in figures}
    ctx.note(
        NAME,
        "search: same server, same database, same wines, ids and vectors; query vectors precomputed for "
        "both; runs alternate ours/theirs. PGVector creates no vector index: variants B and C add one.",
    )
    ctx.note(
        NAME,
        f"LangChain agent: {ROOT / 'bench' / 'langchain_agent.py'} (create_agent, ChatOpenAI, two @tool "
        "functions calling our handle(), same prompt, tool schemas and response_format); it does no "
        "history load/save, guard pre-check or grounding validation.",
    )
    return figures
