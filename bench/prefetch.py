"""`prefetch`: prefetch on vs off, side by side in one run, on the latency model.

Typical recommendation turns go through the real agent (the shipped catalogue in PostgreSQL, the real openai
SDK) to a model on the OpenAI-compatible fake that behaves as a capable model does: with candidates in the
prompt that are of the kind asked for it answers at once; otherwise it calls search_wines with the filters
it reads, then answers from the results. Every request is paced by the latency model of bench/streaming.py
(1 s to the first token, then 30 tokens a second, 3 characters a token), scaled by ``TIME_SCALE`` so the quick
run stays short (the agent's own milliseconds are not scaled, which only counts against prefetch).

Figures per mode, and the ratios on/off:
- the share of turns that made exactly one LLM call (target ≥ 75 % with prefetch on);
- the time outside generating the answer: the agent's own time (reading, prefetch, tools, saving; real seconds)
  plus every modelled wait but the answer's output tokens (first tokens, the tool round), target ≤ 0.65×;
- prompt tokens per turn, estimated as the characters of every request's messages and tools / 4, target ≤ 0.8×;
- the cost per turn at DEFAULT_PRICE (domain/pricing.py) from the same estimates;
- turns whose wines break a constraint of the request (a wine of another type, over the budget): must be 0.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from bench.common import Context, Figure, figure, log, median

NAME = "prefetch"
FIRST_TOKEN_S = 1.0
TOKENS_PER_S = 30.0
CHARS_PER_TOKEN = 3
PROMPT_CHARS_PER_TOKEN = 4
ONE_CALL_TARGET = 0.75
OUTSIDE_RATIO_TARGET = 0.65
PROMPT_RATIO_TARGET = 0.8
QUERIES: tuple[str, ...] = (
    "красное сухое к стейку до 3000",
    "белое вино к рыбе",
    "игристое на праздник до 5000",
    "розовое на летний вечер",
    "Каберне совиньон до 1500 рублей",
    "красное к пицце до 2000",
    "белое сухое к сыру",
    "игристое в подарок",
)
_BUDGET = re.compile(r"до\s+(\d[\d\s]*)")


@dataclass
class Turn:
    mode: str
    query: str
    wall_s: float
    llm_calls: int
    answer_output_s: float  # the final answer's output tokens at the latency model (unscaled)
    model_s: float  # every request's modelled time (first token + output), unscaled
    prompt_tokens: int
    completion_tokens: int
    violations: list[str] = field(default_factory=list)


class CapableModel:
    """The model's side of the latency model: answers from good candidates at once, else searches first."""

    def __init__(self, time_scale: float):
        self.time_scale = time_scale
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []  # per request: prompt chars, output chars, kind

    def __call__(self, body: dict) -> Any:
        from tests.fakes.openai_server import delayed
        from tests.fakes.provider_behaviours import (
            SEARCH_TOOL,
            candidates_suffice,
            completion,
            customer_query,
            has_tool_results,
            search_arguments,
            tool_call,
        )

        prompt_chars = len(json.dumps({"m": body.get("messages"), "t": body.get("tools")}, ensure_ascii=False))
        if body.get("tools") and not has_tool_results(body) and not candidates_suffice(body):
            call = tool_call(SEARCH_TOOL, search_arguments(customer_query(body)))
            step = completion(body, {"content": None, "tool_calls": [call]}, finish_reason="tool_calls")
            output, kind = call["function"]["arguments"] + SEARCH_TOOL, "tool"
        else:
            output, kind = realistic_answer(body), "answer"
            step = completion(body, {"content": output})
        tokens = math.ceil(len(output) / CHARS_PER_TOKEN)
        with self.lock:
            self.requests.append({"prompt_chars": prompt_chars, "output_tokens": tokens, "kind": kind})
        return delayed(step, self.time_scale * (FIRST_TOKEN_S + tokens / TOKENS_PER_S))

    def take(self) -> list[dict[str, Any]]:
        with self.lock:
            taken, self.requests = self.requests, []
        return taken


def realistic_answer(body: dict) -> str:
    """Three wines of the kind asked (from the candidates or the tool results), described at length."""
    from bench.streaming import answer_json
    from tests.fakes.provider_behaviours import customer_query, offered_wines, wanted_type

    kind = wanted_type(customer_query(body))
    budget = _budget(customer_query(body))
    seen: dict[str, dict] = {}
    for wine in offered_wines(body):
        fits = (kind is None or wine.get("wine_type") == kind) and (
            budget is None or float(wine.get("price_rub") or 0) <= budget
        )
        if fits:
            seen.setdefault(wine["id"], wine)
    wines = list(seen.values())[:3]
    return answer_json(wines)


def _budget(query: str) -> float | None:
    match = _BUDGET.search(query.lower())
    return float(match.group(1).replace(" ", "")) if match else None


def settings(ctx: Context) -> dict[str, Any]:
    if ctx.smoke:
        return {"time_scale": 0.01, "queries": QUERIES[:2]}
    return {"time_scale": 0.02, "queries": QUERIES} if ctx.quick else {"time_scale": 0.25, "queries": QUERIES}


def run(ctx: Context, cfg: dict[str, Any] | None = None) -> list[Figure]:
    cfg = cfg or settings(ctx)
    database = ctx.db().shipped_copy()
    turns: dict[str, list[Turn]] = {"on": [], "off": []}
    # Each full run is 16 turns of ~4 s at ×0.25: two runs (or what --runs asks for) bound the section.
    for _ in range(1 if ctx.quick and not ctx.runs_explicit else ctx.runs if ctx.runs_explicit else 2):
        for mode in ("off", "on"):
            turns[mode] += measure(database, mode, cfg)
    return figures(turns, cfg)


def measure(database: Any, mode: str, cfg: dict[str, Any]) -> list[Turn]:
    from sommelier.agent.llm.client import OpenAIChat
    from sommelier.agent.loop import TurnRequest
    from sommelier.app import build_agent
    from sommelier.domain.conversation import Deadline
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.observability.telemetry import metrics
    from sommelier.repositories.adapters import in_process_repositories

    from tests.fakes.openai_server import FakeOpenAI

    scale = cfg["time_scale"]
    model = CapableModel(scale)
    results: list[Turn] = []
    with FakeOpenAI() as fake:
        fake.default = model
        llm = OpenAIChat(api_key="test", base_url=fake.base_url, model="bench/model", timeout=60 * scale + 5)
        agent = build_agent(
            in_process_repositories(database.database), LocalHashingEmbeddings(), llm, prefetch=mode == "on"
        )
        agent.run(TurnRequest(text=cfg["queries"][0], chat_id=990_000, save=False))  # warm-up: imports, pool
        model.take()
        for index, query in enumerate(cfg["queries"]):
            request = TurnRequest(text=query, chat_id=990_001 + index, save=False, deadline=Deadline.after(120))
            started = time.perf_counter()
            result = agent.run(request)
            wall = time.perf_counter() - started
            metrics.clear_metrics()
            requests = model.take()
            answers = [r for r in requests if r["kind"] == "answer"]
            results.append(
                Turn(
                    mode=mode,
                    query=query,
                    wall_s=wall,
                    llm_calls=result.metadata["llm_calls"],
                    answer_output_s=(answers[-1]["output_tokens"] / TOKENS_PER_S) if answers else 0.0,
                    model_s=sum(FIRST_TOKEN_S + r["output_tokens"] / TOKENS_PER_S for r in requests),
                    prompt_tokens=sum(math.ceil(r["prompt_chars"] / PROMPT_CHARS_PER_TOKEN) for r in requests),
                    completion_tokens=sum(r["output_tokens"] for r in requests),
                    violations=violations(database, query, result),
                )
            )
    return results


def violations(database: Any, query: str, result: Any) -> list[str]:
    """The request's constraints checked against the catalogue's own rows (not the agent's reading)."""
    import psycopg

    from tests.fakes.provider_behaviours import wanted_type

    problems = [] if result.metadata["mode"] == "llm" else [f"mode {result.metadata['mode']}"]
    ids = result.response.wine_ids()
    if not ids:
        return [*problems, "no wine"]
    with psycopg.connect(database.url) as conn:
        rows = conn.execute("SELECT wine_type, price_rub FROM wines WHERE id = ANY(%s::uuid[])", (ids,)).fetchall()
    kind, budget = wanted_type(query), _budget(query)
    for wine_type, price in rows:
        if kind and wine_type != kind:
            problems.append(f"a {wine_type} wine for {kind}")
        if budget and float(price) > budget:
            problems.append(f"{price} ₽ over {budget:g}")
    return problems


def figures(turns: dict[str, list[Turn]], cfg: dict[str, Any]) -> list[Figure]:
    from sommelier.domain.pricing import DEFAULT_PRICE

    scale = cfg["time_scale"]

    def outside(t: Turn) -> float:
        """The agent's own time (real seconds: not scaled) plus the modelled waits other than the answer's
        output tokens (first tokens, the tool round), in latency-model seconds."""
        own = t.wall_s - scale * t.model_s
        return own + t.model_s - t.answer_output_s

    def cost(t: Turn) -> float:  # in cents
        return 100 * DEFAULT_PRICE.cost(t.prompt_tokens, t.completion_tokens)

    on, off = turns["on"], turns["off"]
    one_call = {mode: sum(t.llm_calls == 1 for t in ts) / len(ts) for mode, ts in turns.items()}
    outside_ratio = mean(outside(t) for t in on) / mean(outside(t) for t in off)
    prompt_ratio = mean(t.prompt_tokens for t in on) / mean(t.prompt_tokens for t in off)
    broken = sum(bool(t.violations) for t in on + off)
    details = {
        "time_scale": scale,
        "turns": {mode: [t.__dict__ for t in ts] for mode, ts in turns.items()},
    }
    log(
        f"prefetch: one-call turns {one_call['on']:.0%} on / {one_call['off']:.0%} off; outside generation "
        f"{outside_ratio:.2f}×; prompt tokens {prompt_ratio:.2f}×; cost/turn {mean(cost(t) for t in on):.2f} ¢ on, "
        f"{mean(cost(t) for t in off):.2f} ¢ off; constraint violations {broken}"
    )
    note = f"latency model ×{scale:g}"
    return [
        figure(NAME, "one-call turns, prefetch on", "%", [100 * one_call["on"]], at_least=100 * ONE_CALL_TARGET),
        figure(NAME, "one-call turns, prefetch off", "%", [100 * one_call["off"]]),
        figure(
            NAME, "time outside the answer's generation, on/off", "×", [outside_ratio], at_most=OUTSIDE_RATIO_TARGET
        ),
        figure(NAME, "time outside the answer's generation, on", "s", [median([outside(t) for t in on])], note=note),
        figure(NAME, "time outside the answer's generation, off", "s", [median([outside(t) for t in off])], note=note),
        figure(NAME, "prompt tokens per turn, on/off", "×", [prompt_ratio], at_most=PROMPT_RATIO_TARGET),
        figure(NAME, "prompt tokens per turn, on", "tokens", [mean(t.prompt_tokens for t in on)]),
        figure(NAME, "prompt tokens per turn, off", "tokens", [mean(t.prompt_tokens for t in off)]),
        figure(NAME, "cost per turn, on", "¢", [mean(cost(t) for t in on)], note="DEFAULT_PRICE"),
        figure(NAME, "cost per turn, off", "¢", [mean(cost(t) for t in off)], note="DEFAULT_PRICE"),
        figure(NAME, "turns breaking a constraint", "turns", [broken], at_most=0, details=details),
    ]
