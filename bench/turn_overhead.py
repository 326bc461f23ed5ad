"""`turn_overhead`: our agent turn with a zero-latency fake LLM, on the shipped catalogue.

A recommendation turn: guard pre-check → history load → LLM round 1 (search_wines tool call) →
the tool through the in-process adapter (real PostgreSQL) → LLM round 2 (final JSON answer) →
validation and grounding → rendering → the turn saved to history → metadata and metrics.
One chat for all turns, so after the warm-up the history holds its steady-state 10 messages.

overhead = turn wall time − time inside ChatLLM.complete (the target's definition); also reported
with the stricter boundary (− time inside the SDK's HTTP exchanges only), which counts the openai
SDK's own request building and response parsing as our overhead (the LangChain ratio uses it).
Token figures: the fake's usage estimate (ceil(len(json.dumps(messages, ensure_ascii=False)) / 4),
messages only) and len(json.dumps(messages)) / 4 (ASCII-escaped JSON, which inflates Cyrillic);
the two tool schemas come on top in the tool rounds.
"""

from __future__ import annotations

from statistics import mean

from bench.agent_harness import OurAgentTurns, TurnSample, start_fake_llm
from bench.common import Context, Figure, figure, log, median, percentile

NAME = "turn_overhead"
OVERHEAD_TARGET_MS = 50.0


def settings(ctx: Context) -> dict[str, int]:
    if ctx.smoke:
        return {"turns": 2, "warmup": 1}
    return {"turns": 10, "warmup": 6} if ctx.quick else {"turns": 40, "warmup": 10}


def run(ctx: Context) -> list[Figure]:
    cfg = settings(ctx)
    runs, catalogue_rows = _measure(ctx, cfg)
    every = [s for samples in runs for s in samples]
    stages = sorted({k for s in every for k in s.stages_ms if k != "total"})
    details = {
        "turns_per_run": cfg["turns"],
        "stages_p50_ms": {k: round(median([s.stages_ms.get(k, 0.0) for s in every]), 3) for k in stages},
        "sdk_overhead_per_turn_p50_ms": round(median([(s.complete_ms or 0) - s.http_ms for s in every]), 3),
        "wines_recommended": round(mean(s.recommended for s in every), 2),
        "wines_in_catalogue": catalogue_rows,
    }
    figures = _overhead_figures(runs, details) + _token_figures(runs)
    ctx.shared[NAME] = {
        "overhead_complete_p50_ms": median(figures[0].runs),
        "overhead_http_p50_ms": median(figures[2].runs),
        "stages_p50_ms": details["stages_p50_ms"],
    }
    log(
        f"turn_overhead: p50 {figures[0].median:.1f} ms (complete boundary), {figures[2].median:.1f} ms "
        f"(HTTP boundary); stages {details['stages_p50_ms']}"
    )
    return figures


def _measure(ctx: Context, cfg: dict[str, int]) -> tuple[list[list[TurnSample]], int]:
    """ctx.runs runs of cfg["turns"] turns each (after a warm-up) on a copy of the shipped catalogue."""
    wdb = ctx.db().shipped_copy()
    fake = start_fake_llm()
    try:
        turns = OurAgentTurns(wdb.database, fake.base_url)
        for _ in range(cfg["warmup"]):
            turns.turn()
        return [[turns.turn() for _ in range(cfg["turns"])] for _ in range(ctx.runs)], wdb.rows
    finally:
        fake.stop()
        wdb.close()
        ctx.db().postgres.drop_database(wdb.name)


def _per_run(runs: list[list[TurnSample]], value, q: int = 50) -> list[float]:
    return [percentile([value(s) for s in samples], q) for samples in runs]


def _overhead_figures(runs: list[list[TurnSample]], details: dict) -> list[Figure]:
    return [
        figure(
            NAME,
            "turn overhead p50 (wall − LLM complete)",
            "ms",
            _per_run(runs, lambda s: s.overhead_complete_ms),
            at_most=OVERHEAD_TARGET_MS,
            details=details,
        ),
        figure(
            NAME, "turn overhead p95 (wall − LLM complete)", "ms", _per_run(runs, lambda s: s.overhead_complete_ms, 95)
        ),
        figure(NAME, "turn overhead p50 (wall − LLM HTTP)", "ms", _per_run(runs, lambda s: s.overhead_ms)),
        figure(NAME, "turn overhead p95 (wall − LLM HTTP)", "ms", _per_run(runs, lambda s: s.overhead_ms, 95)),
        figure(NAME, "turn wall time p50 (zero-latency LLM)", "ms", _per_run(runs, lambda s: s.wall_ms)),
        figure(NAME, "LLM calls per recommendation turn", "calls", [mean(s.llm_calls for s in r) for r in runs]),
    ]


def _token_figures(runs: list[list[TurnSample]]) -> list[Figure]:
    """The prompt's size per LLM call, as the fake counts it and as the JSON sent measures it."""
    every = [s for samples in runs for s in samples]
    figures = []
    for index in range(max(len(s.prompt_tokens) for s in every)):
        figures.append(
            figure(
                NAME,
                f"prompt tokens, call {index + 1} (fake usage)",
                "tokens",
                [median([s.prompt_tokens[index] for s in r if len(s.prompt_tokens) > index]) for r in runs],
            )
        )
        figures.append(
            figure(
                NAME,
                f"prompt tokens, call {index + 1} (len(json.dumps(messages))/4)",
                "tokens",
                [median([s.json_chars[index] / 4 for s in r if len(s.json_chars) > index]) for r in runs],
                details={
                    "tool_schemas_tokens": round(
                        median([s.tools_json_chars[index] / 4 for s in every if len(s.tools_json_chars) > index])
                    )
                },
            )
        )
    figures.append(
        figure(
            NAME,
            "prompt tokens per turn (fake usage)",
            "tokens",
            [median([sum(s.prompt_tokens) for s in r]) for r in runs],
        )
    )
    return figures
