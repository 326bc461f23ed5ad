"""Real providers' documented habits, reproduced on the OpenAI-compatible fake: one switchable behaviour each.

``FakeOpenAI.behave(name)`` installs a :class:`SimulatedModel`: a small, deterministic "sommelier model"
that reads each request the way a real model would (the customer's query between ``<<<`` and ``>>>``,
the tool results or the catalogue in the prompt, a retry instruction) and answers it: a
``search_wines`` call on the first round, then a Russian JSON answer recommending wines it was given.
Each behaviour changes that in exactly the way its provider is documented to: status codes, error
bodies (OpenRouter's ``error.metadata.raw``), HTTP-200 errors, ids, argument shapes, reasoning fields,
Markdown, fences, English, parameter refusals, latency.

The simulated model shares no code with the agent: it has its own little vocabulary below.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.openai_server import Step, delayed, drop_connection, json_response, malformed, reply, streamed

SEARCH_TOOL = "search_wines"
REASONING_TEXT = "Let me think step by step about what the customer wants before answering."
RETRY_MARK = "не прошёл проверку"

# The simulated model's own understanding of a query (deliberately tiny and separate from the agent's).
_TYPES = (("красн", "red"), ("бел", "white"), ("игрист", "sparkling"), ("шампан", "sparkling"), ("розов", "rose"))
_FOODS = (("стейк", "стейк"), ("рыб", "рыба"), ("сыр", "сыр"), ("пицц", "пицца"))
_PRICE = re.compile(r"до\s+(\d[\d\s]*)")


def customer_query(body: dict) -> str:
    for message in body.get("messages") or []:
        if message.get("role") == "user" and "<<<" in str(message.get("content")):
            return str(message["content"]).rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]
    return ""


def wanted_type(query: str) -> str | None:
    lowered = query.lower()
    return next((kind for stem, kind in _TYPES if stem in lowered), None)


def search_arguments(query: str) -> dict[str, Any]:
    lowered = query.lower()
    arguments: dict[str, Any] = {}
    kind = wanted_type(query)
    if kind:
        arguments["wine_type"] = kind
    food = next((dish for stem, dish in _FOODS if stem in lowered), None)
    if food:
        arguments["food_pairing"] = food
    price = _PRICE.search(lowered)
    if price:
        arguments["price_max"] = int(price.group(1).replace(" ", ""))
    return arguments


def offered_wines(body: dict) -> list[dict]:
    """Wines the agent gave the model this turn: tool results, or the catalogue inside the prompt."""
    wines: list[dict] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, str):
            try:
                result = json.loads(content)
            except ValueError:
                continue
            wines += [
                {"id": w.get("ref"), **w}
                for w in result.get("wines") or []
                if isinstance(w, dict) and (w.get("id") or w.get("ref"))
            ]
        elif message.get("role") == "user" and isinstance(content, str) and "## Каталог" in content:
            wines += prompt_rows(content, "## Каталог")
        if message.get("role") == "user" and isinstance(content, str) and "## Кандидаты" in content:
            wines += prompt_candidates(content)
    return wines


def with_refs_as_ids(result: dict) -> dict:
    """A tool result as a fake model reads it: each wine's short reference (w1, w2 …) as its "id", which the
    agent reads in an answer's wine_id as the ref."""
    wines = result.get("wines")
    if isinstance(wines, list):
        result = {**result, "wines": [{"id": w.get("ref"), **w} if isinstance(w, dict) else w for w in wines]}
    return result


def prompt_candidates(content: str) -> list[dict]:
    """The wines the agent found before asking (one JSON object a line after «## Кандидаты»)."""
    return prompt_rows(content, "## Кандидаты")


def prompt_rows(content: str, heading: str) -> list[dict]:
    """The wine rows of a prompt's section (one JSON object a line, fenced between <<< and >>>)."""
    wines: list[dict] = []
    if heading not in content:
        return wines
    for line in content.split(heading, 1)[1].splitlines():
        if line.startswith("## "):
            break
        if line.startswith("{"):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and (row.get("id") or row.get("ref")):
                # A row names its wine by a short reference (w1, w2 …): the fake models answer with it where
                # they used to copy the id (the agent reads a ref in wine_id as the ref).
                wines.append({"id": row.get("ref"), **row})
    return wines


def candidates_suffice(body: dict) -> bool:
    """What a model does with candidates in the prompt: answers from them when some are of the kind asked."""
    query = customer_query(body)
    kind = wanted_type(query)
    rows = [
        row
        for m in body.get("messages") or []
        if m.get("role") == "user" and "## Кандидаты" in str(m.get("content"))
        for row in prompt_candidates(str(m["content"]))
    ]
    return any(kind is None or row.get("wine_type") == kind for row in rows)


def is_retry(body: dict) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and messages[-1].get("role") == "user" and RETRY_MARK in str(messages[-1].get("content"))


def has_tool_results(body: dict) -> bool:
    return any(m.get("role") == "tool" for m in body.get("messages") or [])


def answer_payload(body: dict, *, english: bool = False, markdown: bool = False) -> dict[str, Any]:
    """The answer a good model writes: up to two of the offered wines that fit the query, in Russian."""
    query = customer_query(body)
    kind = wanted_type(query)
    wines = offered_wines(body)
    fitting = [w for w in wines if kind is None or w.get("wine_type") == kind] or wines
    chosen: list[dict] = []
    for wine in fitting:
        if wine["id"] not in {c["id"] for c in chosen}:
            chosen.append(wine)
        if len(chosen) == 2:
            break
    if not chosen:
        return {
            "response_type": "informational",
            "intro": "Sorry, nothing fits." if english else "К сожалению, подходящих вин сейчас не нашлось.",
            "wines": [],
            "closing": "Try another request?" if english else "Попробуем изменить бюджет или стиль?",
            "guard_type": None,
        }

    def description(wine: dict) -> str:
        if english:
            return f"A lovely wine from {wine.get('region') or 'a fine region'}, great for your occasion."
        text = f"Вино из региона {wine.get('region') or 'с хорошей репутацией'}: гармоничное и выразительное."
        return f"**Отличный выбор.** {text} Подойдёт к вашему *поводу*." if markdown else text

    return {
        "response_type": "recommendation",
        "intro": "Here are my picks for you."
        if english
        else ("**Вот** что я подобрал." if markdown else "Вот что я подобрал."),
        "wines": [{"wine_id": w["id"], "wine_name": w["name"], "description": description(w)} for w in chosen],
        "closing": "Want more options?" if english else "Подобрать что-нибудь ещё?",
        "guard_type": None,
    }


def answer_json(body: dict, **options: Any) -> str:
    return json.dumps(answer_payload(body, **options), ensure_ascii=False)


# ---------------------------------------------------------------------------
# Response bodies in the shapes providers send
# ---------------------------------------------------------------------------
_ids = itertools.count(1)


def completion(
    body: dict,
    message: dict[str, Any],
    *,
    finish_reason: str | None = "stop",
    reasoning_tokens: int | None = None,
    completion_tokens: int | None = None,
    extra: dict[str, Any] | None = None,
    choice_extra: dict[str, Any] | None = None,
) -> Step:
    prompt_tokens = len(json.dumps(body.get("messages"), ensure_ascii=False)) // 4
    produced = completion_tokens if completion_tokens is not None else len(json.dumps(message, ensure_ascii=False)) // 4
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": produced,
        "total_tokens": prompt_tokens + produced,
    }
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}
    choice.update(choice_extra or {})
    payload = {
        "id": f"gen-fake-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [choice],
        "usage": usage,
    }
    payload.update(extra or {})
    return json_response(payload)


def tool_call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": f"call_{next(_ids)}" if call_id is None else call_id,
        "type": "function",
        "function": {"name": name, "arguments": text},
    }


def openai_error(status: int, message: str, *, code: Any = None, param: str | None = None, **fields: Any) -> Step:
    error = {"message": message, "type": "invalid_request_error" if status < 500 else "server_error"}
    error.update({"param": param, "code": code})
    error.update(fields)
    return json_response({"error": error}, status=status)


def openrouter_error(status: int, raw: str, provider: str, headers: dict[str, str] | None = None) -> Step:
    """OpenRouter's wrapper: the message says only "Provider returned error"; the reason is in metadata.raw."""
    body = {
        "error": {
            "message": "Provider returned error",
            "code": status,
            "metadata": {"raw": raw, "provider_name": provider},
        },
        "user_id": "user_fake",
    }
    return json_response(body, status=status, headers=headers)


# ---------------------------------------------------------------------------
# The model and its behaviours
# ---------------------------------------------------------------------------
@dataclass
class SimulatedModel:
    """A well-behaved model; each behaviour overrides one of the hooks."""

    name: str = "well_behaved"
    tool_rounds: int = 1  # rounds of tool calls before answering (a second one broadens the search)
    calls: int = 0
    stats: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, body: dict) -> Step:
        with self._lock:
            self.calls += 1
            call = self.calls
        step = self._answer(body, call)
        return as_stream(step, body) if body.get("stream") else step

    def _answer(self, body: dict, call: int) -> Step:
        refusal = self.reject(body, call)
        if refusal is not None:
            return refusal
        rounds_done = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant" and m.get("tool_calls"))
        if (
            body.get("tools")
            and body.get("tool_choice") != "none"
            and rounds_done < self.tool_rounds
            and not is_retry(body)
            and not (self.tool_rounds <= 1 and candidates_suffice(body))
        ):
            query = customer_query(body)
            if rounds_done == 0:
                first = tool_call(SEARCH_TOOL, search_arguments(query))
            else:
                kind = wanted_type(query)
                first = tool_call("semantic_search", {"query": query, **({"wine_type": kind} if kind else {})})
            return self.tool_step(body, call, [first])
        return self.answer_step(body, call)

    def count(self, what: str) -> None:
        with self._lock:
            self.stats[what] = self.stats.get(what, 0) + 1

    # hooks
    def reject(self, body: dict, call: int) -> Step | None:
        return None

    def tool_step(self, body: dict, call: int, calls: list[dict]) -> Step:
        return completion(body, {"content": None, "tool_calls": calls}, finish_reason="tool_calls")

    def answer_step(self, body: dict, call: int) -> Step:
        return completion(body, {"content": answer_json(body)})


class OpenRouter200ErrorBody(SimulatedModel):
    """An error after generation started: HTTP 200, `choices: null` and an `error` object (first call)."""

    def reject(self, body, call):
        if call == 1:
            return json_response(
                {
                    "id": "gen-fake-error",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": None,
                    "error": {
                        "code": 502,
                        "message": "Upstream error from provider",
                        "metadata": {"raw": "overloaded"},
                    },
                }
            )
        return None


class OpenRouterFinishReasonError(SimulatedModel):
    """A choice that ends with `finish_reason: "error"` and `content: null` (first call)."""

    def reject(self, body, call):
        if call == 1:
            return completion(
                body,
                {"content": None},
                finish_reason="error",
                choice_extra={"error": {"code": 502, "message": "Internal error in the upstream provider"}},
            )
        return None


class OpenRouterWrapped400(SimulatedModel):
    """An upstream 400 wrapped as "Provider returned error"; only metadata.raw says that json_schema is refused."""

    def reject(self, body, call):
        response_format = (body.get("response_format") or {}).get("type")
        if response_format == "json_schema":
            raw = json.dumps({"error": {"message": "json_schema response_format is not supported by this model"}})
            return openrouter_error(400, raw, "Mistral")
        return None


class OpenRouterDropsParameters(SimulatedModel):
    """Unsupported parameters silently dropped: parallel_tool_calls=false and response_format ignored."""

    def tool_step(self, body, call, calls):
        query = customer_query(body)
        extra = tool_call(
            "semantic_search", {"query": query, **({"wine_type": wanted_type(query)} if wanted_type(query) else {})}
        )
        return super().tool_step(body, call, calls + [extra])

    def answer_step(self, body, call):
        return completion(body, {"content": "Конечно! Вот мой ответ: " + answer_json(body)})


class RetryAfterStatus(SimulatedModel):
    """429 or 503 with Retry-After on the first call."""

    def __init__(self, status: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.status = status

    def reject(self, body, call):
        if call == 1:
            raw = "Rate limit exceeded: free-models-per-min" if self.status == 429 else "No instances available"
            return openrouter_error(self.status, raw, "Fake", headers={"Retry-After": "1"})
        return None


class ClaudeIgnoresResponseFormat(SimulatedModel):
    """Sonnet 4 has no structured outputs: response_format ignored, the JSON comes in a ```json fence."""

    def answer_step(self, body, call):
        return completion(body, {"content": "```json\n" + answer_json(body) + "\n```"})


class ClaudeProseThenFence(SimulatedModel):
    """A sentence of prose, then the JSON inside a ```json fence."""

    def answer_step(self, body, call):
        return completion(
            body, {"content": "Я подобрал вина по вашему запросу.\n\n```json\n" + answer_json(body) + "\n```"}
        )


class ClaudeMarkdownBold(SimulatedModel):
    """**bold** and *emphasis* in every text despite the instructions."""

    def answer_step(self, body, call):
        return completion(body, {"content": answer_json(body, markdown=True)})


class ClaudeToolIdsAndEmptyArguments(SimulatedModel):
    """`toolu_…` ids; a call without arguments arrives with `""` as its arguments (the first round looks at
    the catalogue without filters, the second searches with them)."""

    def tool_step(self, body, call, calls):
        first_round = not has_tool_results(body)
        if first_round:
            return super().tool_step(body, call, [tool_call(SEARCH_TOOL, "", call_id=f"toolu_01Fake{call:04d}")])
        arguments = search_arguments(customer_query(body))
        return super().tool_step(body, call, [tool_call(SEARCH_TOOL, arguments, call_id=f"toolu_01Fake{call:04d}")])


class ClaudeEmptyAssistant400(SimulatedModel):
    """Every message but a final assistant one needs content: an empty assistant message in history is a 400.

    The first answer is empty, so an agent that sends it back gets the 400."""

    def reject(self, body, call):
        for index, message in enumerate(body.get("messages") or []):
            if message.get("role") == "assistant" and not message.get("content") and not message.get("tool_calls"):
                raw = json.dumps(
                    {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": f"messages.{index}: all messages must have non-empty content except for the "
                            "optional final assistant message",
                        },
                    }
                )
                return openrouter_error(400, raw, "Anthropic")
        return None

    def answer_step(self, body, call):
        if not is_retry(body) and not self.stats.get("empty"):
            self.count("empty")
            return completion(body, {"content": ""})
        return super().answer_step(body, call)


class BedrockNeedsTools(SimulatedModel):
    """Bedrock: `tools` must be defined whenever the history holds tool calls or results (two tool rounds,
    so the answer is written by the final call)."""

    def reject(self, body, call):
        history = any(m.get("role") == "tool" or m.get("tool_calls") for m in body.get("messages") or [])
        if history and not body.get("tools"):
            raw = json.dumps(
                {"message": "The toolConfig field must be defined when using toolUse and toolResult content blocks."}
            )
            return openrouter_error(400, raw, "Amazon Bedrock")
        return None


class GeminiEmptyToolIds(SimulatedModel):
    """Tool-call ids are empty strings."""

    def tool_step(self, body, call, calls):
        return super().tool_step(body, call, [{**c, "id": ""} for c in calls])


class GeminiToolCallsFinishStop(SimulatedModel):
    """Tool calls that come with `finish_reason: "stop"`."""

    def tool_step(self, body, call, calls):
        return completion(body, {"content": None, "tool_calls": calls}, finish_reason="stop")


class GeminiThoughtSignature(SimulatedModel):
    """Gemini 3 via OpenRouter: each assistant message's reasoning_details must come back, or a 400."""

    def reject(self, body, call):
        for message in body.get("messages") or []:
            if message.get("role") == "assistant" and message.get("tool_calls"):
                details = message.get("reasoning_details") or []
                if not any(d.get("type") == "reasoning.encrypted" and d.get("data") for d in details):
                    raw = json.dumps(
                        {
                            "error": {
                                "code": 400,
                                "message": "Function call is missing a thought_signature in functionCall parts.",
                            }
                        }
                    )
                    return openrouter_error(400, raw, "Google AI Studio")
        return None

    def tool_step(self, body, call, calls):
        details = [
            {
                "type": "reasoning.encrypted",
                "data": f"sig-{call}-opaque",
                "id": calls[0]["id"],
                "format": "google-gemini-v1",
                "index": 0,
            }
        ]
        return completion(
            body, {"content": None, "tool_calls": calls, "reasoning_details": details}, finish_reason="tool_calls"
        )


class GeminiSchemaDialect(SimulatedModel):
    """The older schema API rejects `additionalProperties` and list-valued `type` in a response schema."""

    def reject(self, body, call):
        schema = json.dumps((body.get("response_format") or {}).get("json_schema") or {})
        if "additionalProperties" in schema or re.search(r'"type":\s*\[', schema):
            raw = json.dumps(
                {
                    "error": {
                        "code": 400,
                        "message": 'Invalid JSON payload received. Unknown name "additionalProperties" at '
                        "'generation_config.response_schema': Cannot find field.",
                        "status": "INVALID_ARGUMENT",
                    }
                }
            )
            return openrouter_error(400, raw, "Google")
        return None


class ReasoningModelMaxTokens(SimulatedModel):
    """OpenAI reasoning models reject `max_tokens` (they want `max_completion_tokens`)."""

    def reject(self, body, call):
        if "max_tokens" in body:
            return openai_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
                "instead.",
                code="unsupported_parameter",
                param="max_tokens",
            )
        return None


class ReasoningModelTemperature(SimulatedModel):
    """OpenAI reasoning models reject any temperature other than 1."""

    def reject(self, body, call):
        if "temperature" in body and body["temperature"] != 1:
            return openai_error(
                400,
                f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. Only the "
                "default (1) value is supported.",
                code="unsupported_value",
                param="temperature",
            )
        return None


class Refusal(SimulatedModel):
    """The first answer is a `refusal` with no content."""

    def answer_step(self, body, call):
        if not self.stats.get("refused"):
            self.count("refused")
            return completion(body, {"content": None, "refusal": "I'm sorry, I can't help with that request."})
        return super().answer_step(body, call)


class ThinkingUsesTheBudget(SimulatedModel):
    """Thinking uses up a small output limit: empty content, finish_reason "length", all tokens reasoning."""

    def reject(self, body, call):
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or 0
        if limit < 4000:
            return completion(
                body, {"content": ""}, finish_reason="length", completion_tokens=limit, reasoning_tokens=limit
            )
        return None

    def answer_step(self, body, call):
        step = super().answer_step(body, call)
        return _with_usage(step, reasoning_tokens=2500)


class ReasoningFields(SimulatedModel):
    """Reasoning text in `reasoning` (OpenRouter) and `reasoning_content` (DeepSeek, vLLM) fields."""

    def tool_step(self, body, call, calls):
        return completion(
            body,
            {"content": None, "tool_calls": calls, "reasoning_content": REASONING_TEXT},
            finish_reason="tool_calls",
            reasoning_tokens=40,
        )

    def answer_step(self, body, call):
        return completion(body, {"content": answer_json(body), "reasoning": REASONING_TEXT}, reasoning_tokens=60)


class ThinkTags(SimulatedModel):
    """Reasoning as <think>…</think> inside the content, on tool rounds and answers."""

    def tool_step(self, body, call, calls):
        return completion(
            body, {"content": f"<think>{REASONING_TEXT}</think>", "tool_calls": calls}, finish_reason="tool_calls"
        )

    def answer_step(self, body, call):
        return completion(body, {"content": f"<think>\n{REASONING_TEXT}\n</think>\n\n{answer_json(body)}"})


class AnswersInEnglish(SimulatedModel):
    """Answers in English until told to write Russian."""

    def answer_step(self, body, call):
        told = any("по-русски" in str(m.get("content")) for m in (body.get("messages") or [])[2:])
        return completion(body, {"content": answer_json(body, english=not told)})


class DeepSeekJsonSchema(SimulatedModel):
    """DeepSeek: `json_schema` is a 400 "This response_format type is unavailable now"."""

    def reject(self, body, call):
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return openai_error(400, "This response_format type is unavailable now", code="invalid_request_error")
        return None


class VllmWithoutAutoToolChoice(SimulatedModel):
    """vLLM started without --enable-auto-tool-choice: any request with tools is a 400."""

    def reject(self, body, call):
        if body.get("tools"):
            return json_response(
                {
                    "object": "error",
                    "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                },
                status=400,
            )
        return None


class VllmGuidedDecodingWins(SimulatedModel):
    """vLLM with tools and a json_schema response_format: guided decoding wins, never a tool call (the
    model then writes an answer with a wine it made up)."""

    def _answer(self, body, call):
        if (
            body.get("tools")
            and (body.get("response_format") or {}).get("type") == "json_schema"
            and not has_tool_results(body)
        ):
            self.count("guided")
            invented = {
                "response_type": "recommendation",
                "intro": "Вот что я подобрал.",
                "wines": [{"wine_id": None, "wine_name": "Château Imaginaire", "description": "Придуманное вино."}],
                "closing": "Ещё?",
                "guard_type": None,
            }
            return completion(body, {"content": json.dumps(invented, ensure_ascii=False)})
        return super()._answer(body, call)


class LlamaCppWithoutJinja(SimulatedModel):
    """llama.cpp without --jinja: HTTP 500 "tools param requires --jinja flag"."""

    def reject(self, body, call):
        if body.get("tools"):
            return json_response(
                {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}},
                status=500,
            )
        return None


class IgnoresParallelToolCalls(SimulatedModel):
    """sglang/vLLM ignore parallel_tool_calls=false: two calls in one message."""

    def tool_step(self, body, call, calls):
        query = customer_query(body)
        second = tool_call("semantic_search", {"query": query})
        return super().tool_step(body, call, calls + [second])


class ToolCallAsBareJson(SimulatedModel):
    """The tool call written as a bare JSON object in `content`, no `tool_calls`."""

    def tool_step(self, body, call, calls):
        function = calls[0]["function"]
        text = json.dumps(
            {"name": function["name"], "arguments": json.loads(function["arguments"])}, ensure_ascii=False
        )
        return completion(body, {"content": text})


class ToolCallAsTaggedText(SimulatedModel):
    """The tool call written as `<tool_call>{…}</tool_call>` in `content`."""

    def tool_step(self, body, call, calls):
        function = calls[0]["function"]
        text = json.dumps(
            {"name": function["name"], "arguments": json.loads(function["arguments"])}, ensure_ascii=False
        )
        return completion(body, {"content": f"<tool_call>\n{text}\n</tool_call>"})


class ArgumentsAsObject(SimulatedModel):
    """Tool-call arguments as a JSON object instead of a string."""

    def tool_step(self, body, call, calls):
        objects = [
            {**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}} for c in calls
        ]
        return completion(body, {"content": None, "tool_calls": objects}, finish_reason="tool_calls")


class SlowFinalAnswer(SimulatedModel):
    """The final answer takes `generation_s` to generate (35 s at 33 tokens/s, scaled for tests)."""

    def __init__(self, generation_s: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.generation_s = generation_s

    def answer_step(self, body, call):
        self.count("slow_generations")
        return delayed(super().answer_step(body, call), self.generation_s)


class MagistralContentParts(SimulatedModel):
    """`content` as a list of chunks: a `thinking` chunk (its own list of text chunks), then the `text` one."""

    def answer_step(self, body, call):
        parts = [
            {"type": "thinking", "thinking": [{"type": "text", "text": REASONING_TEXT}]},
            {"type": "text", "text": answer_json(body)},
        ]
        return completion(body, {"content": parts})


class DashScopeThinkingNonStream(SimulatedModel):
    """Qwen3 on DashScope: a call that does not stream must turn thinking off (`enable_thinking: false`)."""

    def reject(self, body, call):
        if body.get("stream") or body.get("enable_thinking") is False:
            return None
        self.count("thinking_refusals")
        return json_response(
            {
                "error": {
                    "code": "invalid_parameter_error",
                    "param": None,
                    "message": "parameter.enable_thinking must be set to false for non-streaming calls",
                    "type": "invalid_request_error",
                },
                "id": "chatcmpl-fake",
                "request_id": "fake",
            },
            status=400,
        )


class LlamaCppNullContent(SimulatedModel):
    """An assistant message with `content: null` in the history is refused (500), even beside tool calls."""

    def reject(self, body, call):
        for message in body.get("messages") or []:
            if message.get("role") == "assistant" and "content" in message and message["content"] is None:
                self.count("null_content")
                error = {
                    "code": 500,
                    "message": "Expected 'content' to be a string or an array",
                    "type": "server_error",
                }
                return json_response({"error": error}, status=500)
        return None


def gemini_list_error(status: int, message: str, google_status: str, details: list[dict]) -> Step:
    """Gemini's OpenAI-compatible endpoint: the error body is a JSON list of one `{"error": …}` object."""
    return json_response(
        [{"error": {"code": status, "message": message, "status": google_status, "details": details}}], status=status
    )


class Gemini429ListBody(SimulatedModel):
    """Per-minute quota: 429 with no Retry-After header; the wait is RetryInfo's `retryDelay` inside a list-shaped
    body, and every request before it has passed is refused again."""

    def __init__(self, retry_delay_s: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.retry_delay_s = retry_delay_s
        self.blocked_until: float | None = None
        self.served_since_block = True

    def reject(self, body, call):
        now = time.monotonic()
        if self.served_since_block and not body.get("messages", [{}])[-1].get("role") == "tool":
            self.blocked_until = now + self.retry_delay_s
            self.served_since_block = False
        if self.blocked_until is not None and now < self.blocked_until:
            self.count("quota_refusals")
            delay = f"{self.retry_delay_s:.3f}s"
            return gemini_list_error(
                429,
                "You exceeded your current quota, please check your plan and billing details.\n"
                f"* Quota exceeded for metric: generate_content_free_tier_requests, limit: 10\nPlease retry in {delay}.",
                "RESOURCE_EXHAUSTED",
                [
                    {
                        "@type": "type.googleapis.com/google.rpc.Help",
                        "links": [{"description": "Learn more about quotas"}],
                    },
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
                ],
            )
        return None

    def answer_step(self, body, call):
        self.served_since_block = True
        return super().answer_step(body, call)


class Gemini400ListBody(SimulatedModel):
    """A field the compatibility layer does not know (`parallel_tool_calls`): 400 with the cause only in a
    list-shaped body."""

    def reject(self, body, call):
        if "parallel_tool_calls" not in body:
            return None
        message = 'Invalid JSON payload received. Unknown name "parallel_tool_calls": Cannot find field.'
        return gemini_list_error(
            400,
            message,
            "INVALID_ARGUMENT",
            [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"description": message}]}],
        )


class KeepAliveStall(SimulatedModel):
    """The first answer streams a little, then only `: keep-alive` comments come, no data, for a minute."""

    def __init__(self, keepalive_for_s: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.keepalive_for_s = keepalive_for_s

    def answer_step(self, body, call):
        if not body.get("stream") or self.stats.get("stalled"):
            return super().answer_step(body, call)
        self.count("stalled")
        return streamed(
            reply(answer_json(body)), chars_per_token=24, stall_after=3, stall_s=self.keepalive_for_s, keepalive_s=0.02
        )

    def __call__(self, body: dict) -> Step:
        with self._lock:
            self.calls += 1
            call = self.calls
        step = self._answer(body, call)
        if body.get("stream") and step.kind != "streamed":
            return as_stream(step, body)
        return step


class SilentReasoning(SimulatedModel):
    """A reasoning model thinks hidden for `silence_s` before its first token (streamed or whole)."""

    def __init__(self, silence_s: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.silence_s = silence_s

    def answer_step(self, body, call):
        self.count("slow_generations")
        if body.get("stream"):
            return streamed(reply(answer_json(body)), chars_per_token=24, first_token_s=self.silence_s)
        return delayed(super().answer_step(body, call), self.silence_s)

    __call__ = KeepAliveStall.__call__


class HarmonyMarkup(SimulatedModel):
    """gpt-oss without a harmony parser: the analysis channel (with a JSON object of its own) and the final
    channel, markup and all, in `content`."""

    def answer_step(self, body, call):
        analysis = f"{REASONING_TEXT} {json.dumps(search_arguments(customer_query(body)), ensure_ascii=False)}"
        content = (
            f"<|channel|>analysis<|message|>{analysis}<|end|>"
            f"<|start|>assistant<|channel|>final<|message|>{answer_json(body)}<|return|>"
        )
        return completion(body, {"content": content})


class HtmlPage200(SimulatedModel):
    """A gateway (or a wrong base URL) answers every request with an HTML page and status 200."""

    def reject(self, body, call):
        return malformed(
            "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Please enable cookies</body></html>",
            content_type="text/html; charset=UTF-8",
        )


class AlternatingRoles(SimulatedModel):
    """Mistral-family templates: two user (or two assistant) messages in a row are refused. The first answer
    is empty, so the agent must ask again without breaking the order."""

    def reject(self, body, call):
        roles = [m.get("role") for m in body.get("messages") or [] if m.get("role") != "system"]
        for before, after in zip(roles, roles[1:], strict=False):
            if before == after and before in ("user", "assistant"):
                self.count("order_refusals")
                return json_response(
                    {
                        "object": "error",
                        "message": f"Unexpected role '{after}' after role '{before}'",
                        "type": "invalid_request_message_order",
                        "param": None,
                        "code": "3230",
                    },
                    status=400,
                )
        return None

    def answer_step(self, body, call):
        if not is_retry(body):
            return completion(body, {"content": ""})
        return super().answer_step(body, call)


class ProviderDown(SimulatedModel):
    """Every request: 503 with no Retry-After."""

    def reject(self, body, call):
        return openrouter_error(503, "no healthy upstream", "Fake")


class ProviderUnreachable(SimulatedModel):
    """Every request: the connection is closed without an answer."""

    def reject(self, body, call):
        return drop_connection()


def as_stream(step: Step, body: dict) -> Step:
    """The same answer as Server-Sent Events, for a request with `stream: true`: content in pieces,
    reasoning and `reasoning_details` in deltas, tool calls (arguments as text) in two pieces, the
    finish reason, the usage chunk when asked for. An HTTP-200 error becomes OpenRouter's mid-stream
    error chunk (`error` and `finish_reason: "error"`); other statuses and transport steps stay as they are."""
    if step.kind == "delayed":
        return delayed(as_stream(step.data["step"], body), step.data["seconds"])
    if step.kind != "json" or step.data["status"] != 200:
        return step
    payload = step.data["body"]
    base = {"id": payload.get("id", "gen-fake"), "object": "chat.completion.chunk", "created": int(time.time())}
    base["model"] = payload.get("model") or body.get("model")

    def event(choice: dict | None, **extra: Any) -> bytes:
        chunk = {**base, "choices": [] if choice is None else [{"index": 0, "logprobs": None, **choice}], **extra}
        return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"

    events = [
        b": OPENROUTER PROCESSING\n\n",
        event({"delta": {"role": "assistant", "content": ""}, "finish_reason": None}),
    ]
    choices = payload.get("choices")
    if not choices:
        error = payload.get("error") or {"message": "no choices"}
        events.append(event({"delta": {"content": ""}, "finish_reason": "error"}, error=error))
        return malformed(b"".join(events) + b"data: [DONE]\n\n", content_type="text/event-stream")
    choice = choices[0]
    message = choice.get("message") or {}
    for field_name in ("reasoning", "reasoning_content"):
        if message.get(field_name):
            events.append(event({"delta": {field_name: message[field_name]}, "finish_reason": None}))
    if message.get("reasoning_details"):
        events.append(event({"delta": {"reasoning_details": message["reasoning_details"]}, "finish_reason": None}))
    content = message.get("content") or ""
    for start in range(0, len(content), 24):
        events.append(event({"delta": {"content": content[start : start + 24]}, "finish_reason": None}))
    if message.get("refusal"):
        events.append(event({"delta": {"refusal": message["refusal"]}, "finish_reason": None}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        arguments = function["arguments"]
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        head = {
            "index": index,
            "id": call.get("id"),
            "type": "function",
            "function": {"name": function["name"], "arguments": ""},
        }
        events.append(event({"delta": {"tool_calls": [head]}, "finish_reason": None}))
        half = len(arguments) // 2
        for piece in (arguments[:half], arguments[half:]):
            if piece:
                delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                events.append(event({"delta": delta, "finish_reason": None}))
    finish = choice.get("finish_reason")
    extra = {"error": choice["error"]} if choice.get("error") else {}
    events.append(event({"delta": {}, "finish_reason": finish}, **extra))
    if (body.get("stream_options") or {}).get("include_usage") and payload.get("usage"):
        events.append(event(None, usage=payload["usage"]))
    return malformed(b"".join(events) + b"data: [DONE]\n\n", content_type="text/event-stream")


def _with_usage(step: Step, *, reasoning_tokens: int) -> Step:
    body = json.loads(json.dumps(step.data["body"]))
    body["usage"]["completion_tokens"] += reasoning_tokens
    body["usage"]["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return json_response(body)


@dataclass(frozen=True)
class Behaviour:
    name: str
    provider: str
    documented: str
    expected: str  # "answer": a clean grounded answer from the model; "offline": the offline answer
    build: Any  # (time_scale) -> SimulatedModel
    budget_s: float = 60.0  # the turn budget (real seconds)
    timeout_s: float = 30.0  # LLM_TIMEOUT_S (real seconds)
    stall_s: float = 20.0  # LLM_STREAM_STALL_S (real seconds)
    scaled: bool = False  # its times are scaled down in tests (a 35 s generation in a fraction of a second)


def _b(name, provider, documented, cls, expected="answer", **kwargs) -> Behaviour:
    limit_names = ("budget_s", "timeout_s", "stall_s", "scaled")
    args = {k: v for k, v in kwargs.items() if k not in limit_names}
    limits = {k: v for k, v in kwargs.items() if k in limit_names}
    return Behaviour(
        name, provider, documented, expected, lambda scale: cls(name=name, **_scaled(args, scale)), **limits
    )


def _scaled(args: dict, scale: float) -> dict:
    return {k: (v * scale if k.endswith("_s") else v) for k, v in args.items()}


SLOW_GENERATION_S = 35.0

BEHAVIOURS: dict[str, Behaviour] = {
    b.name: b
    for b in (
        _b("well_behaved", "—", "a model that does everything right (the baseline)", SimulatedModel),
        _b(
            "openrouter_200_error_body",
            "OpenRouter",
            "HTTP 200 with `choices: null` and an `error` object",
            OpenRouter200ErrorBody,
        ),
        _b(
            "openrouter_finish_reason_error",
            "OpenRouter",
            'a choice with `finish_reason: "error"`, `content: null`',
            OpenRouterFinishReasonError,
        ),
        _b(
            "openrouter_wrapped_400",
            "OpenRouter",
            '400 "Provider returned error"; the reason only in `error.metadata.raw`',
            OpenRouterWrapped400,
            tool_rounds=2,
        ),
        _b(
            "openrouter_drops_parameters",
            "OpenRouter",
            "unsupported parameters dropped: parallel calls, response_format ignored",
            OpenRouterDropsParameters,
        ),
        _b("openrouter_429_retry_after", "OpenRouter", "429 with Retry-After", RetryAfterStatus, status=429),
        _b("openrouter_503_retry_after", "OpenRouter", "503 with Retry-After", RetryAfterStatus, status=503),
        _b(
            "claude_ignores_response_format",
            "Anthropic",
            "response_format ignored; JSON inside a ```json fence",
            ClaudeIgnoresResponseFormat,
            tool_rounds=2,
        ),
        _b("claude_prose_then_fence", "Anthropic", "a sentence of prose, then the ```json fence", ClaudeProseThenFence),
        _b("claude_markdown_bold", "Anthropic", "`**bold**` despite instructions", ClaudeMarkdownBold),
        _b(
            "claude_toolu_ids_empty_arguments",
            "Anthropic",
            '`toolu_…` ids; a call without arguments has `""`',
            ClaudeToolIdsAndEmptyArguments,
            tool_rounds=2,
        ),
        _b(
            "claude_empty_assistant_400",
            "Anthropic",
            "an empty assistant message sent back is a 400",
            ClaudeEmptyAssistant400,
        ),
        _b(
            "bedrock_tools_required",
            "Bedrock",
            "`tools` required whenever the history holds tool calls",
            BedrockNeedsTools,
            tool_rounds=2,
        ),
        _b("gemini_empty_tool_ids", "Gemini", "tool-call ids are empty", GeminiEmptyToolIds),
        _b(
            "gemini_tool_calls_finish_stop",
            "Gemini",
            'tool calls with `finish_reason: "stop"`',
            GeminiToolCallsFinishStop,
        ),
        _b(
            "gemini3_thought_signature",
            "Gemini",
            "`reasoning_details` must be sent back, or 400 thought_signature",
            GeminiThoughtSignature,
            tool_rounds=2,
        ),
        _b(
            "gemini_schema_dialect",
            "Gemini",
            "`additionalProperties` / list-valued `type` rejected in the schema",
            GeminiSchemaDialect,
            tool_rounds=2,
        ),
        _b(
            "openai_reasoning_max_tokens",
            "OpenAI o-series/gpt-5",
            "`max_tokens` rejected (`max_completion_tokens`)",
            ReasoningModelMaxTokens,
        ),
        _b(
            "openai_reasoning_temperature",
            "OpenAI o-series/gpt-5",
            "temperature other than 1 rejected",
            ReasoningModelTemperature,
        ),
        _b("openai_refusal", "OpenAI", "a message with `refusal` and no content", Refusal),
        _b(
            "reasoning_uses_the_budget",
            "reasoning models",
            'thinking uses the limit: empty content, `finish_reason: "length"`',
            ThinkingUsesTheBudget,
        ),
        _b("reasoning_fields", "reasoning models", "`reasoning` / `reasoning_content` fields", ReasoningFields),
        _b("think_tags", "reasoning models", "`<think>…</think>` inside the content", ThinkTags),
        _b("answers_in_english", "reasoning models", "the answer in English", AnswersInEnglish),
        _b(
            "deepseek_json_schema",
            "DeepSeek",
            '`json_schema`: 400 "This response_format type is unavailable now"',
            DeepSeekJsonSchema,
            tool_rounds=2,
        ),
        _b(
            "vllm_no_auto_tool_choice",
            "vLLM",
            "started without --enable-auto-tool-choice: 400 on any request with tools",
            VllmWithoutAutoToolChoice,
        ),
        _b(
            "vllm_guided_decoding_wins",
            "vLLM",
            "tools + json_schema: guided decoding wins, never a tool call",
            VllmGuidedDecodingWins,
            tool_rounds=2,
        ),
        _b(
            "llamacpp_without_jinja",
            "llama.cpp",
            'without --jinja: 500 "tools param requires --jinja"',
            LlamaCppWithoutJinja,
        ),
        _b(
            "ignores_parallel_tool_calls",
            "sglang/vLLM",
            "`parallel_tool_calls=false` ignored: two calls at once",
            IgnoresParallelToolCalls,
        ),
        _b(
            "tool_call_as_bare_json",
            "self-hosted",
            "the tool call as a bare JSON object in `content`",
            ToolCallAsBareJson,
        ),
        _b(
            "tool_call_as_tagged_text",
            "self-hosted",
            "the tool call as `<tool_call>{…}</tool_call>` in `content`",
            ToolCallAsTaggedText,
        ),
        _b("arguments_as_object", "self-hosted", "arguments as a JSON object instead of a string", ArgumentsAsObject),
        _b(
            "slow_final_answer",
            "latency",
            "the final answer takes 35 s (Sonnet 4: ~33 tokens/s); budget 110 s (a 120 s function), LLM_TIMEOUT_S 30",
            SlowFinalAnswer,
            generation_s=SLOW_GENERATION_S,
            budget_s=110.0,
            timeout_s=30.0,
            scaled=True,
        ),
        _b(
            "slow_final_answer_short_budget",
            "latency",
            "the final answer takes 35 s; budget 52 s (a 60 s function), LLM_TIMEOUT_S 30",
            SlowFinalAnswer,
            expected="answer_or_offline",
            generation_s=SLOW_GENERATION_S,
            budget_s=52.0,
            timeout_s=30.0,
            scaled=True,
        ),
        _b(
            "magistral_content_parts",
            "Mistral",
            "`content` as a list of `thinking` and `text` chunks",
            MagistralContentParts,
        ),
        _b(
            "dashscope_thinking_non_stream",
            "DashScope",
            "400 `parameter.enable_thinking must be set to false for non-streaming calls`",
            DashScopeThinkingNonStream,
        ),
        _b(
            "llamacpp_null_content",
            "llama.cpp",
            "500 \"Expected 'content' to be a string or an array\" on an assistant `content: null`",
            LlamaCppNullContent,
            tool_rounds=2,
        ),
        _b(
            "gemini_429_list_body",
            "Gemini",
            "429 without Retry-After; `retryDelay` (28 s) in a list-shaped body",
            Gemini429ListBody,
            retry_delay_s=28.0,
            scaled=True,
        ),
        _b(
            "gemini_400_list_body",
            "Gemini",
            "400 for `parallel_tool_calls`; the cause only in a list-shaped body",
            Gemini400ListBody,
        ),
        _b(
            "keepalive_stall",
            "OpenRouter/DeepSeek",
            "a stream held open by `: keep-alive` comments and no data for 60 s",
            KeepAliveStall,
            keepalive_for_s=60.0,
            scaled=True,
        ),
        _b(
            "silent_reasoning_25s",
            "reasoning models",
            "25 s of hidden thinking before the first token",
            SilentReasoning,
            silence_s=25.0,
            scaled=True,
        ),
        _b("harmony_markup", "gpt-oss", "harmony channels (`<|channel|>analysis…`) in `content`", HarmonyMarkup),
        _b(
            "html_page_200",
            "gateways",
            "an HTML page with status 200 on every request",
            HtmlPage200,
            expected="offline",
        ),
        _b(
            "alternating_roles",
            "Mistral/strict templates",
            "two user messages in a row refused; the first answer is empty",
            AlternatingRoles,
        ),
        _b("provider_down", "any", "every request 503, no Retry-After", ProviderDown, expected="offline"),
        _b(
            "provider_unreachable",
            "any",
            "every connection closed without an answer",
            ProviderUnreachable,
            expected="offline",
        ),
    )
}
