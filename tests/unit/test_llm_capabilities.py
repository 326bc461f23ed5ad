"""Capability lessons from provider refusals, stated capabilities, the turn deadline and reply normalisation."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from sommelier.agent.llm.capabilities import (
    CapabilityRegistry,
    ModelCapabilities,
    lesson_from_error,
    parse_capabilities,
    provider_error_text,
)
from sommelier.agent.llm.reply import calls_from_text, normalise_message, strip_reasoning
from sommelier.domain.conversation import Deadline
from sommelier.settings import load_settings
from sommelier.telegram.consumer import lambda_turn_deadline

TOOL_ROUND = {"model": "m", "messages": [], "tools": [{}], "parallel_tool_calls": False, "max_tokens": 1500}
FINAL = {"model": "m", "messages": [], "max_tokens": 1500, "temperature": 0.6}


@pytest.mark.parametrize(
    "text,request_body,final,lesson",
    [
        ("This response_format type is unavailable now", {**FINAL, "response_format": {}}, True, "json_object"),
        (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'",
            FINAL,
            True,
            {"token_parameter": "max_completion_tokens"},
        ),
        (
            "Unsupported value: 'temperature' does not support 0.6 with this model. Only the default (1) value is "
            "supported.",
            FINAL,
            True,
            {"temperature": False},
        ),
        (
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
            TOOL_ROUND,
            False,
            {"tools": False},
        ),
        ("tools param requires --jinja flag", TOOL_ROUND, False, {"tools": False}),
        (
            "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
            FINAL,
            True,
            {"final_tools": "none_choice"},
        ),
        ("tools are not supported by this model", TOOL_ROUND, False, {"tools": False}),
        ("No endpoints found that support tool use.", TOOL_ROUND, False, {"tools": False}),
        ("Invalid API key", FINAL, True, None),
        # a mistake in the history is not a missing capability: tools stay on
        (
            "messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
            TOOL_ROUND,
            False,
            None,
        ),
        ("Function call is missing a thought_signature in functionCall parts.", TOOL_ROUND, False, None),
    ],
)
def test_lessons(text, request_body, final, lesson):
    if isinstance(lesson, str):
        lesson = {"response_format": lesson}
    assert lesson_from_error(text, request_body, ModelCapabilities(), final=final) == lesson


def test_tool_choice_none_refused_on_a_final_call_means_omitting_the_tools():
    caps = ModelCapabilities(final_tools="none_choice")
    request = {**FINAL, "tools": [{}], "tool_choice": "none"}
    assert lesson_from_error("'tool_choice' none is not supported", request, caps, final=True) == {
        "final_tools": "omit"
    }


def test_response_format_steps_down_to_none_and_stops():
    caps = ModelCapabilities(response_format="json_object")
    request = {**FINAL, "response_format": {"type": "json_object"}}
    assert lesson_from_error("response_format not supported", request, caps, final=True) == {"response_format": "none"}


def test_openrouter_reason_is_read_from_metadata_raw():
    exc = RuntimeError("Error code: 400 - Provider returned error")
    exc.body = {  # what the openai SDK keeps: the `error` object of the body
        "message": "Provider returned error",
        "code": 400,
        "metadata": {"raw": '{"error":{"message":"json_schema is not supported"}}', "provider_name": "DeepSeek"},
    }
    text = provider_error_text(exc)
    assert "json_schema is not supported" in text and "DeepSeek" in text
    assert lesson_from_error(text, {**FINAL, "response_format": {}}, ModelCapabilities(), final=True)


def test_registry_known_models_config_and_memory():
    registry = CapabilityRegistry({"my/model": parse_capabilities("response_format=none, final_tools=none_choice")})
    assert registry.get("openai/gpt-5-mini").token_parameter == "max_completion_tokens"
    assert registry.get("o3").temperature is False
    assert registry.get("deepseek/deepseek-chat").response_format == "json_object"
    assert registry.get("anthropic/claude-sonnet-4") == ModelCapabilities(prompt_cache="cache_control")
    stated = registry.get("my/model")
    assert stated.response_format == "none" and stated.final_tools == "none_choice"
    registry.learn("anthropic/claude-sonnet-4", {"final_tools": "none_choice"}, "bedrock")
    assert registry.get("anthropic/claude-sonnet-4").final_tools == "none_choice"
    assert CapabilityRegistry().get("anthropic/claude-sonnet-4").final_tools == "omit", "memory is per registry"


@pytest.mark.parametrize("bad", ["tools", "colour=red", "response_format=xml", "temperature=maybe"])
def test_stated_capabilities_reject_typos(bad):
    with pytest.raises(ValueError, match="LLM_CAPABILITIES"):
        parse_capabilities(bad)


def test_deadline_from_lambda_context():
    llm = load_settings({"DELIVERY_RESERVE_S": "10"}).llm
    deadline = lambda_turn_deadline(SimpleNamespace(get_remaining_time_in_millis=lambda: 120_000), llm)
    assert deadline.budget_s == pytest.approx(110)
    assert deadline.remaining_for_llm() < deadline.remaining() <= 110
    capped_llm = load_settings({"DELIVERY_RESERVE_S": "10", "LLM_TURN_BUDGET_S": "45"}).llm
    capped = lambda_turn_deadline(SimpleNamespace(get_remaining_time_in_millis=lambda: 120_000), capped_llm)
    assert capped.budget_s == pytest.approx(45)
    assert lambda_turn_deadline(object(), llm) is None


def test_expired_deadline():
    assert Deadline.after(0).expired
    assert not Deadline.after(5).expired


def test_reasoning_is_taken_out_of_the_content():
    content, reasoning = strip_reasoning('<think>the user wants red</think>\n{"a": 1}')
    assert content == '{"a": 1}' and "user wants red" in reasoning
    content, reasoning = strip_reasoning("hidden plan</think>answer")  # the opening tag was in the prompt
    assert content == "answer" and "hidden plan" in reasoning


def test_tool_calls_written_as_text():
    names = {"search_wines", "semantic_search"}
    tagged = calls_from_text(
        '<tool_call>{"name": "search_wines", "arguments": {"wine_type": "red"}}</tool_call>', names
    )
    assert [(c.name, json.loads(c.arguments)) for c in tagged] == [("search_wines", {"wine_type": "red"})]
    bare = calls_from_text('{"name": "semantic_search", "parameters": {"query": "лёгкое"}}', names)
    assert bare[0].name == "semantic_search" and json.loads(bare[0].arguments) == {"query": "лёгкое"}
    assert calls_from_text('{"response_type": "informational", "intro": "Привет"}', names) == []
    assert calls_from_text('{"name": "rm_rf", "arguments": {}}', names) == []


def test_message_shapes_of_real_providers():
    message = SimpleNamespace(
        content=None,
        tool_calls=[
            SimpleNamespace(id="", function=SimpleNamespace(name="search_wines", arguments={"wine_type": "red"})),
            SimpleNamespace(id="", function=SimpleNamespace(name="semantic_search", arguments="")),
        ],
        reasoning="thinking…",
        reasoning_details=[{"type": "reasoning.encrypted", "data": "sig"}],
    )
    normalised = normalise_message(message, {"search_wines", "semantic_search"})
    ids = [c.id for c in normalised.tool_calls]
    assert all(ids) and len(set(ids)) == 2, "empty ids are synthesized, unique"
    assert json.loads(normalised.tool_calls[0].arguments) == {"wine_type": "red"}
    assert normalised.tool_calls[1].arguments == "{}", '"" is a call without arguments'
    assert normalised.reasoning == "thinking…"
    assert normalised.reasoning_details == [{"type": "reasoning.encrypted", "data": "sig"}]
