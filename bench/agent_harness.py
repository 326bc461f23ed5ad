"""What the turn benchmarks share: the zero-latency scripted LLM, and timers at the LLM boundary.

The fake LLM is tests/fakes/openai_server.FakeOpenAI (real HTTP on loopback, the real openai SDK)
with a `default` callable, so it answers every turn the same way at no added latency:

- a request with tools and no tool results yet → one search_wines tool call
  (red, "стейк", ≤ 3000 ₽: the test suite's RED_STEAK);
- otherwise → the final JSON answer recommending the first two wines the tools returned
  (tests/integration/test_agent_loop.py `answer_with`).

Two boundaries for "time spent in the LLM":

- HttpTimer wraps the SDK's HTTP client `send` (request out → response body read): the same
  boundary for our agent and for LangChain, used for the side-by-side ratio;
- our ChatLLM `complete` wrapped with a timer (the SDK's request building and response parsing
  counted as LLM time): the definition of our turn-overhead target.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.openai_server import FakeOpenAI, Step, reply, tool_calls

TURN_TEXT = "красное сухое к стейку до 3000"
TOOL_CALL = ("search_wines", {"wine_type": "red", "food_pairing": "стейк", "price_max": 3000})


def tool_results(body: dict) -> list[dict]:
    out = []
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            try:
                out.append(json.loads(message["content"]))
            except (TypeError, ValueError):
                continue
    return out


def found_wines(body: dict) -> list[dict]:
    """The wines of the tool results, each with "id": its short reference in the turn (w1, w2 …), which the
    agent reads in an answer's wine_id as the ref."""
    return [{"id": w.get("ref"), **w} for result in tool_results(body) for w in result.get("wines", [])]


def answer_with(body: dict, count: int = 2) -> Step:
    """The final answer: the first `count` wines the tools returned in this turn."""
    wines = found_wines(body)[:count]
    payload = {
        "response_type": "recommendation" if wines else "informational",
        "intro": "Вот что я нашёл.",
        "wines": [
            {"wine_id": w["id"], "wine_name": w["name"], "description": f"{w['name']} подойдёт к вашему ужину."}
            for w in wines
        ],
        "closing": "Подобрать что-то ещё?",
        "guard_type": None,
    }
    return reply(json.dumps(payload, ensure_ascii=False))


def scripted_turn(body: dict) -> Step:
    if body.get("tools") and not tool_results(body):
        return tool_calls(TOOL_CALL)
    return answer_with(body)


def start_fake_llm() -> FakeOpenAI:
    fake = FakeOpenAI().start()
    fake.default = scripted_turn
    return fake


class HttpTimer:
    """Accumulates the time spent inside an httpx2 client's `send` (the whole HTTP exchange)."""

    def __init__(self) -> None:
        self.ns = 0
        self.calls = 0

    def attach(self, http_client: Any) -> HttpTimer:
        original = http_client.send

        def send(*args: Any, **kwargs: Any):
            started = time.perf_counter_ns()
            try:
                return original(*args, **kwargs)
            finally:
                self.ns += time.perf_counter_ns() - started
                self.calls += 1

        http_client.send = send
        return self

    def take(self) -> tuple[float, int]:
        """(ms, calls) since the last take."""
        ms, calls = self.ns / 1e6, self.calls
        self.ns = 0
        self.calls = 0
        return ms, calls


@dataclass
class CompleteTimer:
    """Wraps our ChatLLM.complete: time, prompt tokens (the fake's usage) and message sizes per call."""

    ns: int = 0
    calls: int = 0
    prompt_tokens: list[int] = field(default_factory=list)
    json_chars: list[int] = field(default_factory=list)
    tools_json_chars: list[int] = field(default_factory=list)

    def attach(self, llm: Any) -> CompleteTimer:
        original = llm.complete

        def complete(messages, **options: Any):  # tools, final, response_format, deadline, ledger: passed on
            tools = options.get("tools")
            self.json_chars.append(len(json.dumps(messages)))
            self.tools_json_chars.append(len(json.dumps(tools)) if tools else 0)
            started = time.perf_counter_ns()
            try:
                answer = original(messages, **options)
            finally:
                self.ns += time.perf_counter_ns() - started
                self.calls += 1
            self.prompt_tokens.append(answer.usage.prompt_tokens)
            return answer

        llm.complete = complete
        return self

    def take(self) -> dict[str, Any]:
        out = {
            "ms": self.ns / 1e6,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "json_chars": self.json_chars,
            "tools_json_chars": self.tools_json_chars,
        }
        self.ns = 0
        self.calls = 0
        self.prompt_tokens = []
        self.json_chars = []
        self.tools_json_chars = []
        return out


@dataclass
class TurnSample:
    wall_ms: float
    http_ms: float
    http_calls: int
    complete_ms: float | None = None
    llm_calls: int = 0
    prompt_tokens: list[int] = field(default_factory=list)
    json_chars: list[int] = field(default_factory=list)
    tools_json_chars: list[int] = field(default_factory=list)
    stages_ms: dict[str, float] = field(default_factory=dict)
    recommended: int = 0

    @property
    def overhead_ms(self) -> float:
        """Turn wall time minus the time inside the LLM HTTP exchanges."""
        return self.wall_ms - self.http_ms

    @property
    def overhead_complete_ms(self) -> float:
        """Turn wall time minus the time inside ChatLLM.complete (our target's definition)."""
        return self.wall_ms - (self.complete_ms or 0.0)


class OurAgentTurns:
    """Our SommelierAgent on the given database, talking to the fake LLM through the real SDK."""

    def __init__(self, database: Any, base_url: str, *, chat_id: int = 880001):
        from sommelier.agent.llm.client import OpenAIChat
        from sommelier.app import build_agent
        from sommelier.embeddings.local import LocalHashingEmbeddings
        from sommelier.observability.telemetry import metrics
        from sommelier.repositories.adapters import in_process_repositories

        self.llm = OpenAIChat(api_key="test", base_url=base_url, model="test-model", timeout=5, max_retries=0)
        self.http = HttpTimer().attach(self.llm._client._client)
        self.complete = CompleteTimer().attach(self.llm)
        self.agent = build_agent(in_process_repositories(database), LocalHashingEmbeddings(), self.llm)
        self.metrics = metrics
        self.chat_id = chat_id
        self.update_id = 0

    def turn(self, text: str = TURN_TEXT) -> TurnSample:
        from sommelier.agent.loop import TurnRequest

        self.update_id += 1
        request = TurnRequest(text=text, chat_id=self.chat_id, user_id=self.chat_id, update_id=self.update_id)
        self.http.take()
        self.complete.take()
        started = time.perf_counter_ns()
        result = self.agent.run(request)
        wall = (time.perf_counter_ns() - started) / 1e6
        http_ms, http_calls = self.http.take()
        complete = self.complete.take()
        self.metrics.clear_metrics()  # Lambda flushes them after the turn (log_metrics); not part of the turn
        if result.metadata["mode"] != "llm" or result.response.response_type != "recommendation":
            raise RuntimeError(
                f"unexpected turn: mode={result.metadata['mode']} errors={result.metadata['structured_output_errors']}"
            )
        return TurnSample(
            wall_ms=wall,
            http_ms=http_ms,
            http_calls=http_calls,
            complete_ms=complete["ms"],
            llm_calls=result.metadata["llm_calls"],
            prompt_tokens=complete["prompt_tokens"],
            json_chars=complete["json_chars"],
            tools_json_chars=complete["tools_json_chars"],
            stages_ms=dict(result.metadata["latency_ms"]),
            recommended=len(result.response.wines),
        )
