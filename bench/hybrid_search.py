"""`hybrid_search`: warm in-process latency of the hybrid retrieval (migration 0010) through `handle()`.

At 10k and 100k synthetic wines (100k skipped in quick mode). The synthetic names repeat the shipped ones
with a lot number («Sassicaia · лот 004211»), so a name matches about one wine in 64: at 100k a name finds
some 1 500 wines and the search ranks them all, the hard case.

- search_wines by `name`: names as customers write them, in the catalogue's alphabet or the other one and
  misspelt (Сассикайя, Château Lynch-Bages, Брунело ди Монтальчино, Kindzmarauli, Мукузани), and a name
  the catalogue lacks (Шато Марго); cycled.
- search_wines with an exclusion and an order (`exclude_sweetness` + `sort`), and a region matched by sound.
- semantic_search with `hybrid` (the word ranking fused with the vector one by reciprocal rank fusion),
  the queries naming a grape or a place so that both rankings have rows, with and without filters; and the
  same calls without `hybrid`, in the same run, for the cost of the fusion.
"""

from __future__ import annotations

from typing import Any

from bench.common import LOCAL_MODEL, Context, Figure, figure, latency_runs, log, median, p50s, p95s, query_vectors

NAME = "hybrid_search"
HYBRID_P95_TARGET_MS = 25.0  # at 100k

NAMES = ["Сассикайя", "Château Lynch-Bages", "Брунело ди Монтальчино", "Kindzmarauli", "Мукузани", "Шато Марго"]
STRUCTURED: list[dict[str, Any]] = [
    {"wine_type": "red", "exclude_sweetness": "dry", "sort": "price_desc"},
    {"wine_type": "red", "exclude_country": "Италия", "price_max": 2000},
    {"region": "Barolo"},
    {"food_pairing": "устрицы"},
]
HYBRID_QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("элегантное вино вроде Бароло", {}),
    ("пино нуар для ужина", {"price_max": 5000}),
    ("свежее белое с кислотностью, рислинг", {}),
    ("насыщенный каберне совиньон из Напы", {"wine_type": "red"}),
]


def events(rows: int) -> dict[str, list[dict[str, Any]]]:
    vectors = query_vectors(len(HYBRID_QUERIES) * 4)
    hybrid = [
        {
            "tool": "semantic_search",
            "arguments": {
                "query": HYBRID_QUERIES[i % len(HYBRID_QUERIES)][0],
                "embedding": vector,
                "embedding_model": LOCAL_MODEL,
                "hybrid": True,
                **HYBRID_QUERIES[i % len(HYBRID_QUERIES)][1],
            },
        }
        for i, vector in enumerate(vectors)
    ]
    return {
        "search_wines by name": [{"tool": "search_wines", "arguments": {"name": n}} for n in NAMES],
        "search_wines with exclusions, order, sound region, dish style": [
            {"tool": "search_wines", "arguments": dict(a)} for a in STRUCTURED
        ],
        "semantic_search hybrid (RRF)": hybrid,
        # the same calls without the word ranking, measured in the same run: what the fusion costs
        "semantic_search vector only (same calls)": [
            {**event, "arguments": {k: v for k, v in event["arguments"].items() if k != "hybrid"}} for event in hybrid
        ],
    }


def caller(handle: Any, database: Any, series: str, cycle: list[dict[str, Any]], found: list[int]) -> Any:
    """One timed call: the i-th event of the cycle through the tool function; its found count kept."""

    def call(i: int) -> None:
        answer = handle(cycle[i % len(cycle)], database)
        if "error" in answer:
            raise RuntimeError(f"{series} answered {answer['error']}")
        found.append(answer["found"])

    return call


def run(ctx: Context) -> list[Figure]:
    from sommelier.toolfn.handler import handle

    figures: list[Figure] = []
    databases = ctx.db()
    for rows in ctx.sizes():
        wdb = databases.synthetic(rows)
        calls = {"calls": 30, "warmup": 10} if ctx.quick or rows >= 100_000 else {"calls": 120, "warmup": 20}
        for series, cycle in events(rows).items():
            found: list[int] = []
            samples = latency_runs(caller(handle, wdb.database, series, cycle, found), runs=ctx.runs, **calls)
            p50, p95 = p50s(samples), p95s(samples)
            target = HYBRID_P95_TARGET_MS if rows >= 100_000 and "vector only" not in series else None
            details = {"wines": rows, "mean_found": round(sum(found) / len(found), 2), "calls_per_run": calls["calls"]}
            figures.append(figure(NAME, f"{series} p50 @{wdb.label}", "ms", p50, details=details))
            figures.append(figure(NAME, f"{series} p95 @{wdb.label}", "ms", p95, at_most=target))
            log(f"hybrid: {series} @{wdb.label}: p50 {median(p50):.2f} ms, p95 {median(p95):.2f} ms, {details}")
    return figures
