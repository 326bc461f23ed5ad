"""Models that bend the customer's request, one documented mistake each, on the OpenAI-compatible fake.

Tool-use error analyses and shop-bot bug reports name the same few ways a model loses a stated constraint:
it leaves a filter out of its tool call, writes a budget in thousands, swaps a range, searches the very
country the customer ruled out, over-constrains its search and then says nothing was found, or returns a
recommendation with an empty list. `MistakeModel` behaves well except for its one mistake: on the first
round it calls `search_wines` with the arguments it was given (the bent ones), and then recommends the first
wines it was handed (tool results, else the prompt's candidates), or makes its answer-side mistake.

It shares no code with the agent: it reads the request body as a model would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.openai_server import Step, reply, tool_calls
from tests.fakes.provider_behaviours import prompt_candidates

NOTHING_FOUND = "К сожалению, по вашему запросу в каталоге ничего не нашлось."
REASON = "Хорошо подходит к тому, что вы описали: чистый вкус и приятное послевкусие."


def _tool_wines(body: dict) -> list[dict]:
    wines: list[dict] = []
    for message in body.get("messages") or []:
        if message.get("role") != "tool":
            continue
        try:
            result = json.loads(message.get("content") or "")
        except ValueError:
            continue
        if isinstance(result, dict):
            wines += [w for w in result.get("wines") or [] if isinstance(w, dict)]
    return wines


def _candidates(body: dict) -> list[dict]:
    rows: list[dict] = []
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            rows += prompt_candidates(text)
    return rows


def _answer(kind: str, intro: str, wines: list[dict]) -> str:
    return json.dumps(
        {
            "response_type": kind,
            "intro": intro,
            "wines": [
                {"wine_id": w.get("id") or w.get("ref"), "wine_name": w.get("name", ""), "description": REASON}
                for w in wines
            ],
            "closing": "Подобрать что-нибудь ещё?",
            "guard_type": None,
        },
        ensure_ascii=False,
    )


@dataclass
class MistakeModel:
    """One model, one mistake. ``search``: the arguments of its one search (None: it answers at once).
    ``answer``: "picks" (the first wines it was handed), "nothing_found" or "empty_recommendation"."""

    search: dict[str, Any] | None
    answer: str = "picks"
    picks: int = 2
    searched: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, body: dict) -> Step:
        results_seen = any(m.get("role") == "tool" for m in body.get("messages") or [])
        if self.search is not None and body.get("tools") and not results_seen and body.get("tool_choice") != "none":
            self.searched.append(dict(self.search))
            return tool_calls(("search_wines", self.search))
        if self.answer == "nothing_found":
            return reply(_answer("informational", NOTHING_FOUND, []))
        if self.answer == "empty_recommendation":
            return reply(_answer("recommendation", "Вот что я могу предложить по вашему запросу.", []))
        offered = _tool_wines(body) if results_seen else []
        wines = offered or _candidates(body)
        if not wines:
            return reply(_answer("informational", NOTHING_FOUND, []))
        return reply(_answer("recommendation", "Вот что я подобрал для вас.", wines[: self.picks]))
