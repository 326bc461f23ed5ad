"""The LangChain equivalent of our agent turn, for the side-by-side benchmark (bench/langchain_compare.py).

A tool-calling agent from the installed LangChain (`langchain.agents.create_agent`, LangChain 1.x;
the 0.x `create_tool_calling_agent` + `AgentExecutor` pair now lives in langchain-classic) on
`ChatOpenAI`, with two `@tool` functions that call our same tool function `handle()`:

- the same system prompt, the same two tool JSON schemas (sommelier/agent/tools.py, passed as args_schema),
- the same structured answer: `response_format` json_schema (ProviderStrategy) with our
  SommelierResponse schema, parsed by LangChain,
- semantic_search embeds the query with our local embedder, as our agent does.

It does less than our turn (no history load/save, no guard pre-check, no grounding validation,
no metadata): the comparison favours LangChain. Importing this module is what its cold start
would load; bench/imports.py times that in a fresh interpreter.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from sommelier.agent.prompts import SYSTEM_PROMPT
from sommelier.agent.tools import SEARCH_WINES, SEMANTIC_SEARCH
from sommelier.domain.answer import RESPONSE_JSON_SCHEMA
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.toolfn.handler import handle

SEARCH = SEARCH_WINES.json_schema()["function"]
SEMANTIC = SEMANTIC_SEARCH.json_schema()["function"]


def _today_shape(schema: dict[str, Any]) -> dict[str, Any]:
    """The answer's schema in the shape the LangChain baseline's tools can fill: its rows carry the tool
    function's UUIDs (no short references), so a wine is named by wine_id, wine_name and a description."""
    wine = {
        "type": "object",
        "additionalProperties": False,
        "required": ["wine_id", "wine_name", "description"],
        "properties": {
            "wine_id": {"type": ["string", "null"]},
            "wine_name": {"type": "string"},
            "description": {"type": "string"},
        },
    }
    properties = {**schema["properties"], "wines": {**schema["properties"]["wines"], "items": wine}}
    return {**schema, "properties": properties}


ANSWER_SCHEMA = {"title": RESPONSE_JSON_SCHEMA["name"], **_today_shape(RESPONSE_JSON_SCHEMA["schema"])}


def build_tools(database: Any = None, embedder: Any = None) -> list:
    embedder = embedder or LocalHashingEmbeddings()

    @tool(SEARCH["name"], description=SEARCH["description"], args_schema=SEARCH["parameters"])
    def search_wines(**arguments: Any) -> str:
        """Structured wine search through the tool function."""
        return json.dumps(handle({"tool": "search_wines", "arguments": arguments}, database), ensure_ascii=False)

    @tool(SEMANTIC["name"], description=SEMANTIC["description"], args_schema=SEMANTIC["parameters"])
    def semantic_search(**arguments: Any) -> str:
        """Semantic wine search: the query is embedded here, the vector goes to the tool function."""
        query = str(arguments.get("query") or "")
        arguments = {**arguments, "embedding": embedder.embed([query])[0], "embedding_model": embedder.model}
        return json.dumps(handle({"tool": "semantic_search", "arguments": arguments}, database), ensure_ascii=False)

    return [search_wines, semantic_search]


def build_chat_model(*, base_url: str | None, api_key: str = "test", model: str = "test-model") -> ChatOpenAI:
    # the same request settings as our OpenAIChat: timeout, no SDK retries in the benchmark, temperature, max_tokens
    return ChatOpenAI(
        base_url=base_url, api_key=api_key, model=model, timeout=5, max_retries=0, temperature=0.6, max_tokens=1500
    )


def build_agent(*, base_url: str | None, database: Any = None, api_key: str = "test", model: str = "test-model"):
    """(compiled agent graph, its ChatOpenAI). agent.invoke({"messages": [{"role": "user", "content": text}]})."""
    chat = build_chat_model(base_url=base_url, api_key=api_key, model=model)
    agent = create_agent(
        chat,
        tools=build_tools(database),
        system_prompt=SYSTEM_PROMPT,
        response_format=ProviderStrategy(ANSWER_SCHEMA, strict=True),
    )
    return agent, chat


def run_turn(agent: Any, text: str) -> dict[str, Any]:
    """One turn; returns the structured answer (a dict shaped like SommelierResponse)."""
    state = agent.invoke({"messages": [{"role": "user", "content": text}]})
    return state["structured_response"]
