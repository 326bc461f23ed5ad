"""`answer_shape`: what the answer's shape costs the customer, today's against the new one, in one run.

Today the model wrote every card's text (a UUID wine_id, the name, a description of two or three sentences)
under a schema that only retries carried, without lengths; `domain/answer.py` accepts up to 1000 characters of
intro, 300 of name and 800 of description a wine and 500 of closing. Now the catalogue speaks: the model names a
wine by its reference (w1, w2 …) and writes one reason of one or two short sentences, a one-sentence intro and
a short closing, under the schema every answering call carries (agent/llm/request.py), with its limits.

Two figures:

- the largest valid answer by each shape's limits, in characters (the JSON the model may write at most):
  the new schema's limits against today's acceptance limits;
- streamed, on the latency model of the `streaming` section (1 s to the first token, 30 tokens a second,
  3 characters a token, through the `sommelier serve` machinery to the fake Bot API): a model writing each field
  at a typical length within its limit, in the new shape against today's, side by side in the same run: when
  the first wine card and the last message (the closing with its buttons) reach the chat.

Targets (issue 35): the largest answer at most 0.4 of today's; the last message at most 0.6 and the first wine
card at most 0.7 of today's time.
"""

from __future__ import annotations

import json
from typing import Any

from bench.agent_harness import TOOL_CALL, found_wines, tool_results
from bench.common import Context, Figure, figure, log
from bench.streaming import (
    CHARS_PER_TOKEN,
    CLOSING,
    DESCRIPTIONS,
    FIRST_TOKEN_S,
    INTRO,
    TOKENS_PER_S,
    PacedLLM,
    shipped_rig,
)

NAME = "answer_shape"
SHAPES = ("today", "new")

# The new shape at a typical length: the prompt asks one sentence of intro, one or two short sentences of
# reason a wine, one short closing question.
NEW_INTRO = "К стейку — три плотных сухих красных в вашем бюджете."
NEW_REASONS = (
    "Мягкие, но ощутимые танины удержат жирность мраморной говядины, а вишня и ваниль подчеркнут корочку.",
    "Плотнее и пряннее: перец и смородина выдержат даже соус из зелёного перца.",
    "Самое мягкое из трёх — для средней прожарки и тех, кто не любит терпких вин.",
)
NEW_CLOSING = "Рассказать подробнее о каком-нибудь из них?"


def largest_today() -> str:
    """The largest answer today's acceptance limits allow (domain/answer.py), as JSON."""
    from sommelier.domain.answer import MAX_CLOSING, MAX_DESCRIPTION, MAX_INTRO, MAX_WINES, WineRecommendation

    name = WineRecommendation.model_fields["wine_name"].metadata
    name_max = next(m.max_length for m in name if hasattr(m, "max_length"))
    wine = {"wine_id": "0" * 36, "wine_name": "ж" * name_max, "description": "ж" * MAX_DESCRIPTION}
    return _answer("ж" * MAX_INTRO, [wine] * MAX_WINES, "ж" * MAX_CLOSING)


def largest_new() -> str:
    """The largest answer the schema sent to the model allows (its maxLength, maxItems and ref pattern)."""
    from sommelier.domain.answer import RESPONSE_JSON_SCHEMA

    schema = RESPONSE_JSON_SCHEMA["schema"]["properties"]
    items = schema["wines"]["items"]["properties"]
    wine = {"ref": "w99", "reason": "ж" * items["reason"]["maxLength"]}
    return _answer(
        "ж" * schema["intro"]["maxLength"], [wine] * schema["wines"]["maxItems"], "ж" * schema["closing"]["maxLength"]
    )


def _answer(intro: str, wines: list[dict[str, Any]], closing: str) -> str:
    payload = {"response_type": "recommendation", "intro": intro, "wines": wines, "closing": closing}
    return json.dumps({**payload, "guard_type": None}, ensure_ascii=False)


class ShapedLLM(PacedLLM):
    """The streaming section's paced model, writing its answer in one shape or the other."""

    def __init__(self) -> None:
        super().__init__()
        self.shape = "new"
        self.database: Any = None  # the rig's catalogue copy, set once it exists
        self.characters: dict[str, int] = {}

    def __call__(self, body: dict):
        from tests.fakes.openai_server import reply, streamed, tool_calls

        if body.get("tools") and not tool_results(body):
            step = tool_calls(TOOL_CALL)
        else:
            text = self.answer(found_wines(body)[:3])
            self.characters[self.shape] = len(text)
            step = reply(text)
        if not self.on:
            return streamed(step, chars_per_token=CHARS_PER_TOKEN)
        return streamed(
            step,
            first_token_s=FIRST_TOKEN_S * self.pace,
            tokens_per_s=TOKENS_PER_S / self.pace,
            chars_per_token=CHARS_PER_TOKEN,
        )

    def answer(self, wines: list[dict]) -> str:
        if self.shape == "new":
            items = [{"ref": w["ref"], "reason": r} for w, r in zip(wines, NEW_REASONS, strict=False)]
            return _answer(NEW_INTRO, items, NEW_CLOSING)
        # Today's shape, with the UUID the model copied from its rows then (read back by name here).
        items = [
            {"wine_id": self._uuid(w), "wine_name": w["name"], "description": text}
            for w, text in zip(wines, DESCRIPTIONS, strict=False)
        ]
        return _answer(INTRO, items, CLOSING)

    def _uuid(self, wine: dict) -> str:
        with self.database.connection() as conn:
            row = conn.execute(
                "SELECT id::text FROM wines WHERE name = %s AND producer = %s LIMIT 1",
                (wine["name"], wine.get("producer", "")),
            ).fetchone()
        return str(row[0]) if row else "00000000-0000-0000-0000-000000000000"


def run(ctx: Context) -> list[Figure]:
    today, new = largest_today(), largest_new()
    out = [
        figure(NAME, "largest valid answer: today's limits", "chars", [len(today)]),
        figure(NAME, "largest valid answer: the schema's limits", "chars", [len(new)]),
        figure(NAME, "largest valid answer: schema / today", "ratio", [len(new) / len(today)], at_most=0.4),
    ]
    turns = 1 if ctx.quick else 3
    results: dict[str, dict[str, list[float]]] = {s: {} for s in SHAPES}
    details: dict[str, Any] = {"streaming": {"drafts_per_turn": [], "telegram_calls_per_turn": []}}
    shaped = ShapedLLM()
    shaped.pace = 0.1 if ctx.smoke else 1.0
    with shipped_rig(ctx, shaped, details) as rig:
        shaped.database = rig.database  # the shaped answers name the copy's wines
        for _ in range(ctx.runs if ctx.runs_explicit or not ctx.quick else 1):
            for shape in SHAPES:  # the shapes alternate within each run
                shaped.shape = shape
                for metric, value in rig.run_mode("streaming", turns).items():
                    results[shape].setdefault(metric, []).append(value)
    log(f"answer_shape: answer characters {shaped.characters}")
    for shape in SHAPES:
        for metric in ("first wine card", "last message"):
            if metric in results[shape]:
                out.append(figure(NAME, f"{shape} shape, streamed: POST → {metric}", "ms", results[shape][metric]))
    for metric, limit in (("first wine card", 0.7), ("last message", 0.6)):
        if metric in results["new"] and metric in results["today"]:
            ratios = [n / t for n, t in zip(results["new"][metric], results["today"][metric], strict=False)]
            out.append(figure(NAME, f"new / today, streamed: {metric}", "ratio", ratios, at_most=limit))
    return out
