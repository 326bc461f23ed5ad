"""`tools`: warm in-process latency of the two LLM tools through the tool function's `handle()`.

At the shipped catalogue (imported with the local embedder), and at 10k and 100k synthetic wines
(100k is skipped in quick mode). Each call goes through the whole contract: decoding and
validating the event, a pooled connection, the parameterised SQL, the JSON-ready answer.

- search_wines: a realistic filter mix, cycled: type + price, food, grape, country.
- semantic_search: wine_type (cycled over the four types) + price_max 3000. The query vectors are
  the labelled mood queries embedded with the local embedder on the shipped catalogue, and random
  unit vectors on the synthetic ones (no cluster structure: the hard case for HNSW).
"""

from __future__ import annotations

from typing import Any

from bench.common import (
    LOCAL_MODEL,
    Context,
    Figure,
    WineDatabase,
    figure,
    latency_runs,
    log,
    median,
    mood_query_vectors,
    p50s,
    p95s,
    percentile,
    query_vectors,
)

NAME = "tools"

SEARCH_MIX: list[dict[str, Any]] = [
    {"wine_type": "red", "price_max": 3000},
    {"food_pairing": "стейк"},
    {"grape_variety": "Пино Нуар"},
    {"country": "Италия"},
    # filters that match nothing: a country with no wines, and a grape the wine type never has
    {"country": "Канада"},
    {"wine_type": "white", "grape_variety": "Саперави"},
]
SEMANTIC_TYPES = ("red", "white", "sparkling", "rose")
SEMANTIC_PRICE_MAX = 3000

SEMANTIC_P95_TARGET_MS = 20.0  # at 100k
SEARCH_P50_TARGET_MS = 5.0  # at 10k


def settings(ctx: Context, rows: int) -> dict[str, int]:
    if ctx.quick:
        return {"calls": 30, "warmup": 10}
    if rows >= 100_000:
        return {"calls": 40, "warmup": 10}  # search_wines takes ~0.1-0.5 s a call there: keep the run bounded
    return {"calls": 200, "warmup": 30}


def search_events() -> list[dict[str, Any]]:
    return [{"tool": "search_wines", "arguments": dict(arguments)} for arguments in SEARCH_MIX]


def semantic_events(wdb: WineDatabase, count: int = 48) -> list[dict[str, Any]]:
    if wdb.rows < 1000:
        queries = mood_query_vectors()
    else:
        queries = [(f"synthetic query {i}", vector) for i, vector in enumerate(query_vectors(count))]
    events = []
    for i, (query, vector) in enumerate(queries):
        events.append(
            {
                "tool": "semantic_search",
                "arguments": {
                    "query": query,
                    "embedding": vector,
                    "embedding_model": LOCAL_MODEL,
                    "wine_type": SEMANTIC_TYPES[i % len(SEMANTIC_TYPES)],
                    "price_max": SEMANTIC_PRICE_MAX,
                },
            }
        )
    return events


def measure(wdb: WineDatabase, events: list[dict[str, Any]], *, runs: int, calls: int, warmup: int):
    """Latency runs of handle(event) cycling through `events`; also the found counts and errors."""
    from sommelier.tools.handler import handle

    database = wdb.database
    found: list[int] = []
    errors: list[str] = []

    def call(i: int) -> None:
        answer = handle(events[i % len(events)], database)
        if "error" in answer:
            errors.append(answer["error"])
        else:
            found.append(answer["found"])

    samples = latency_runs(call, runs=runs, calls=calls, warmup=warmup)
    return samples, found, errors


def per_event_p50(samples: list[list[float]], events: int, *, warmup: int, calls: int) -> list[float]:
    """p50 for each event of the cycle, over every run (latency_runs numbers calls from `warmup`)."""
    buckets: list[list[float]] = [[] for _ in range(events)]
    for run, run_samples in enumerate(samples):
        for j, value in enumerate(run_samples):
            buckets[(warmup + run * calls + j) % events].append(value)
    return [round(percentile(b, 50), 3) for b in buckets]


def run(ctx: Context) -> list[Figure]:
    databases = ctx.db()
    figures: list[Figure] = []
    targets = [databases.shipped()] + [databases.synthetic(rows) for rows in ctx.sizes()]
    shared: dict[str, Any] = {}
    for wdb in targets:
        label = wdb.label
        cfg = settings(ctx, wdb.rows)
        for tool, events in (("search_wines", search_events()), ("semantic_search", semantic_events(wdb))):
            samples, found, errors = measure(wdb, events, runs=ctx.runs, **cfg)
            if errors:
                raise RuntimeError(f"{tool} at {label} answered errors: {errors[:3]}")
            details = {
                "wines": wdb.rows,
                "calls_per_run": cfg["calls"],
                "mean_found": round(sum(found) / len(found), 2),
                "empty_answers": sum(1 for f in found if f == 0),
            }
            if tool == "search_wines":
                details["p50_by_filter_ms"] = dict(
                    zip(
                        [str(a) for a in SEARCH_MIX],
                        per_event_p50(samples, len(events), warmup=cfg["warmup"], calls=cfg["calls"]),
                        strict=True,
                    )
                )
            if wdb.build_detail:
                details["build"] = wdb.build_detail
            p50 = p50s(samples)
            p95 = p95s(samples)
            p50_target = SEARCH_P50_TARGET_MS if (tool == "search_wines" and wdb.rows == 10_000) else None
            p95_target = SEMANTIC_P95_TARGET_MS if (tool == "semantic_search" and wdb.rows == 100_000) else None
            figures.append(figure(NAME, f"{tool} p50 @{label}", "ms", p50, at_most=p50_target, details=details))
            figures.append(figure(NAME, f"{tool} p95 @{label}", "ms", p95, at_most=p95_target))
            shared[f"{tool}@{label}"] = {"p50": median(p50), "p95": median(p95)}
            log(
                f"tools: {tool} @{label}: p50 {median(p50):.2f} ms, p95 {median(p95):.2f} ms, "
                f"mean found {details['mean_found']}"
            )
    ctx.shared[NAME] = shared
    return figures
