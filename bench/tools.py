"""`tools`: warm in-process latency of the two LLM tools through the tool function's `handle()`.

At the shipped catalogue (imported with the local embedder), and at 10k and 100k synthetic wines
(100k is skipped in quick mode). Each call goes through the whole contract: decoding and
validating the event, a pooled connection, the parameterised SQL, the JSON-ready answer.

- search_wines: a realistic filter mix, cycled: type + price, food, grape, country, and filters that
  match nothing (a country, a region, a grape the type never has). Besides the whole mix, the p50/p95
  of the matching filters and of the no-match ones are reported apart (the same calls, split).
- semantic_search: wine_type (cycled over the four types) + price_max 3000. The query vectors are
  the labelled mood queries embedded with the local embedder on the shipped catalogue, and random
  unit vectors on the synthetic ones (no cluster structure: the hard case for HNSW).
- semantic_search with search_wines' filters (country, food, grape, region, sweetness, one that
  matches nothing), cycled: the same SQL `_where` decides the matches in both tools.
"""

from __future__ import annotations

from typing import Any

from bench.common import (
    LOCAL_MODEL,
    Context,
    Figure,
    WineDatabase,
    figure,
    interleaved_latency_runs,
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

SEARCH_MATCHING: list[dict[str, Any]] = [
    {"wine_type": "red", "price_max": 3000},
    {"food_pairing": "стейк"},
    {"grape_variety": "Пино Нуар"},
    {"country": "Италия"},
]
# Filters that match nothing: a country with no wines, a grape the wine type never has, a region with no
# wines (checked before timing: each must answer matched 0).
SEARCH_NO_MATCH: list[dict[str, Any]] = [
    {"country": "Канада"},
    {"wine_type": "white", "grape_variety": "Саперави"},
    {"region": "Атлантида"},
]
SEARCH_MIX: list[dict[str, Any]] = SEARCH_MATCHING + SEARCH_NO_MATCH
SEMANTIC_FILTERS: list[dict[str, Any]] = [
    {"country": "Италия", "wine_type": "red"},
    {"food_pairing": "рыба"},
    {"grape_variety": "Пино Нуар", "price_max": 5000},
    {"region": "Тоскана"},
    {"sweetness": "semi_sweet", "price_min": 1000},
    {"country": "Канада"},  # matches nothing
]
SEMANTIC_TYPES = ("red", "white", "sparkling", "rose")
SEMANTIC_PRICE_MAX = 3000

SEMANTIC_P95_TARGET_MS = 20.0  # at 100k
SEARCH_P50_TARGET_MS = 5.0  # at 10k


def settings(ctx: Context, rows: int) -> dict[str, int]:
    if ctx.smoke:
        return {"calls": 3, "warmup": 1}
    if ctx.quick:
        return {"calls": 30, "warmup": 10}
    if rows >= 100_000:
        return {"calls": 40, "warmup": 10}  # search_wines takes ~0.1-0.5 s a call there: keep the run bounded
    return {"calls": 200, "warmup": 30}


def search_events() -> list[dict[str, Any]]:
    return [{"tool": "search_wines", "arguments": dict(arguments)} for arguments in SEARCH_MIX]


def semantic_events(wdb: WineDatabase, count: int = 48, *, search_filters: bool = False) -> list[dict[str, Any]]:
    """semantic_search calls: type + price_max 3000 cycled, or (`search_filters`) SEMANTIC_FILTERS cycled."""
    if wdb.rows < 1000:
        queries = mood_query_vectors()
    else:
        queries = [(f"synthetic query {i}", vector) for i, vector in enumerate(query_vectors(count))]
    events = []
    for i, (query, vector) in enumerate(queries):
        if search_filters:
            filters = dict(SEMANTIC_FILTERS[i % len(SEMANTIC_FILTERS)])
        else:
            filters = {"wine_type": SEMANTIC_TYPES[i % len(SEMANTIC_TYPES)], "price_max": SEMANTIC_PRICE_MAX}
        events.append(
            {
                "tool": "semantic_search",
                "arguments": {"query": query, "embedding": vector, "embedding_model": LOCAL_MODEL, **filters},
            }
        )
    return events


def check_no_match(wdb: WineDatabase) -> None:
    """The no-match filters must really match nothing at this size, or their figures mean something else."""
    from sommelier.toolfn.handler import handle

    for arguments in SEARCH_NO_MATCH:
        answer = handle({"tool": "search_wines", "arguments": dict(arguments)}, wdb.database)
        if answer.get("matched") != 0:
            raise RuntimeError(f"{arguments} matched {answer.get('matched')} wines at {wdb.label}")


def measure(wdb: WineDatabase, events: list[dict[str, Any]], *, runs: int, calls: int, warmup: int):
    """Latency runs of handle(event) cycling through `events`; also the found counts and errors."""
    from sommelier.toolfn.handler import handle

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


def split_runs(
    samples: list[list[float]], events: int, chosen: set[int], *, warmup: int, calls: int
) -> list[list[float]]:
    """Each run's samples of the events whose index in the cycle is in `chosen` (call numbers as in latency_runs)."""
    return [
        [value for j, value in enumerate(run_samples) if (warmup + run * calls + j) % events in chosen]
        for run, run_samples in enumerate(samples)
    ]


def per_event_p50(samples: list[list[float]], events: int, *, warmup: int, calls: int) -> list[float]:
    """p50 for each event of the cycle, over every run (latency_runs numbers calls from `warmup`)."""
    buckets: list[list[float]] = [[] for _ in range(events)]
    for run, run_samples in enumerate(samples):
        for j, value in enumerate(run_samples):
            buckets[(warmup + run * calls + j) % events].append(value)
    return [round(percentile(b, 50), 3) for b in buckets]


# The region filter's match test before issue 14 (a substring of the region or the appellation), kept here
# only to measure the word index side by side with it.
SUBSTRING_REGION = (
    "(lower(translate(w.region, 'Ёё-', 'Ее ')) LIKE %(like)s "
    "OR lower(translate(coalesce(w.appellation, ''), 'Ёё-', 'Ее ')) LIKE %(like)s)"
)
REGION_PHRASES = {"a region with no wines": "Атлантида", "Тоскана": "Тоскана"}


def escape_like(value: str) -> str:
    """Escape LIKE wildcards, as the substring filter this benchmark compares against did."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def region_match_figures(wdb: WineDatabase, ctx: Context, cfg: dict[str, int]) -> list[Figure]:
    """search_wines' first query (the bounded count) with the region filter on whole words (the GIN index of
    migration 0007) and as the substring LIKE it replaced, interleaved run by run."""
    from sommelier.domain.search import search_filters
    from sommelier.language import normalize
    from sommelier.toolfn.search import MATCH_COUNT_CAP, _where

    count = f"SELECT count(*) FROM (SELECT 1 FROM wines w WHERE {{where}} LIMIT {MATCH_COUNT_CAP}) matched"
    figures: list[Figure] = []
    for what, phrase in REGION_PHRASES.items():
        conditions, params, _ = _where(search_filters({"region": phrase}))
        words_sql = count.format(where=" AND ".join(conditions))
        substring_sql = count.format(where=f"w.available AND {SUBSTRING_REGION}")
        substring_params = {"like": "%" + escape_like(normalize(phrase)) + "%"}
        matched: dict[str, int] = {}

        def runner(name: str, sql: str, arguments: dict[str, Any], matched: dict[str, int] = matched):
            def call(_: int) -> None:
                with wdb.database.connection() as conn:
                    matched[name] = conn.execute(sql, arguments).fetchone()[0]

            return call

        runs = interleaved_latency_runs(
            {
                "whole words": runner("whole words", words_sql, params),
                "substring": runner("substring", substring_sql, substring_params),
            },
            runs=ctx.runs,
            calls=cfg["calls"],
            warmup=cfg["warmup"],
        )
        details = {"matched (capped at 200)": matched}
        for name, samples in runs.items():
            figures.append(
                figure(NAME, f"region count p50 @{wdb.label}, {what}, {name}", "ms", p50s(samples), details=details)
            )
        ratio = [s / w for s, w in zip(p50s(runs["substring"]), p50s(runs["whole words"]), strict=True)]
        figures.append(figure(NAME, f"region count p50 @{wdb.label}, {what}: substring / whole words", "×", ratio))
        log(f"tools: region {phrase!r} @{wdb.label}: substring/words {median(ratio):.2f}×, matched {matched}")
    return figures


def run(ctx: Context) -> list[Figure]:
    databases = ctx.db()
    figures: list[Figure] = []
    targets = [databases.shipped()] + [databases.synthetic(rows) for rows in ctx.sizes()]
    shared: dict[str, Any] = {}
    for wdb in targets:
        cfg = settings(ctx, wdb.rows)
        check_no_match(wdb)
        series = (
            ("search_wines", search_events()),
            ("semantic_search", semantic_events(wdb)),
            ("semantic_search with search_wines' filters", semantic_events(wdb, search_filters=True)),
        )
        for tool, events in series:
            figures.extend(series_figures(ctx, wdb, tool, events, cfg, shared))
        if wdb.rows >= 10_000 and not ctx.quick:  # issue 14's before/after comparison: full runs only
            figures.extend(region_match_figures(wdb, ctx, cfg))
    ctx.shared[NAME] = shared
    return figures


def series_figures(
    ctx: Context, wdb: WineDatabase, tool: str, events: list[dict[str, Any]], cfg: dict[str, int], shared: dict
) -> list[Figure]:
    """One tool's series at one catalogue size: its p50/p95 (and, for search_wines, split by matching)."""
    label = wdb.label
    samples, found, errors = measure(wdb, events, runs=ctx.runs, **cfg)
    if errors:
        raise RuntimeError(f"{tool} at {label} answered errors: {errors[:3]}")
    details = series_details(wdb, tool, events, cfg, samples, found)
    p50 = p50s(samples)
    p95 = p95s(samples)
    p50_target = SEARCH_P50_TARGET_MS if (tool == "search_wines" and wdb.rows == 10_000) else None
    p95_target = SEMANTIC_P95_TARGET_MS if (tool == "semantic_search" and wdb.rows == 100_000) else None
    figures = [
        figure(NAME, f"{tool} p50 @{label}", "ms", p50, at_most=p50_target, details=details),
        figure(NAME, f"{tool} p95 @{label}", "ms", p95, at_most=p95_target),
    ]
    if tool == "search_wines":
        no_match = set(range(len(SEARCH_MATCHING), len(SEARCH_MIX)))
        for part, chosen in (
            ("filters that match wines", set(range(len(SEARCH_MATCHING)))),
            ("filters that match nothing", no_match),
        ):
            split = split_runs(samples, len(events), chosen, warmup=cfg["warmup"], calls=cfg["calls"])
            figures.append(figure(NAME, f"{tool} p50 @{label}, {part}", "ms", p50s(split)))
            figures.append(figure(NAME, f"{tool} p95 @{label}, {part}", "ms", p95s(split)))
            shared[f"{tool}@{label}, {part}"] = {"p50": median(p50s(split)), "p95": median(p95s(split))}
    shared[f"{tool}@{label}"] = {"p50": median(p50), "p95": median(p95)}
    log(
        f"tools: {tool} @{label}: p50 {median(p50):.2f} ms, p95 {median(p95):.2f} ms, "
        f"mean found {details['mean_found']}"
    )
    return figures


def series_details(
    wdb: WineDatabase,
    tool: str,
    events: list[dict[str, Any]],
    cfg: dict[str, int],
    samples: list[list[float]],
    found: list[int],
) -> dict[str, Any]:
    """The JSON details of a series: counts, the p50 per filter, the synthetic catalogue's build times."""
    details: dict[str, Any] = {
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
    if tool.startswith("semantic_search with"):
        by_filter = {}
        for k, arguments in enumerate(SEMANTIC_FILTERS):
            chosen = {i for i in range(len(events)) if i % len(SEMANTIC_FILTERS) == k}
            split = split_runs(samples, len(events), chosen, warmup=cfg["warmup"], calls=cfg["calls"])
            by_filter[str(arguments)] = {
                "p50": round(median(p50s(split)), 3),
                "p95": round(median(p95s(split)), 3),
            }
        details["by_filter_ms"] = by_filter
    if wdb.build_detail:
        details["build"] = wdb.build_detail
    return details
