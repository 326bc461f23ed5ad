"""The LLM tools: name, description and JSON schema, generated from the argument dataclasses.

The tool function validates with the same dataclasses (domain/search.py), so the schema the model
sees and the rules the tool function applies cannot drift apart. Dataclasses, not pydantic: the
tool function's cold start stays free of pydantic (about 80 ms, see BENCHMARKS.md).
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, NamedTuple

from sommelier.domain.search import SearchFilters, SemanticSearchParameters

if TYPE_CHECKING:
    from sommelier.agent.llm.port import ToolSpec
    from sommelier.domain.wire import JSONValue

_JSON_TYPES = {"str": "string", "float": "number", "int": "integer"}


class LlmTool(NamedTuple):
    name: str
    description: str
    parameters: type

    def json_schema(self) -> ToolSpec:
        """The OpenAI function-calling definition of this tool."""
        properties: dict[str, Any] = {}
        required: list[JSONValue] = []
        offered = [item for item in fields(self.parameters) if "llm" in item.metadata]
        # limit and exclude_ids are the caller's: not offered to the model. Required arguments come first.
        for item in sorted(offered, key=lambda item: not item.metadata["llm"]["required"]):
            spec = item.metadata["llm"]
            base = str(item.type).split("|")[0].strip()
            prop: dict[str, Any] = {"type": _JSON_TYPES[base]}
            if spec["enum"]:
                prop["enum"] = list(spec["enum"])
            prop["description"] = spec["description"]
            properties[item.name] = prop
            if spec["required"]:
                required.append(item.name)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        }


SEARCH_WINES = LlmTool(
    name="search_wines",
    description=(
        "Поиск вин по структурированным критериям: тип, сладость, сорт винограда, цена, страна, регион, "
        "сочетаемость с блюдами. Используй когда пользователь указывает конкретные характеристики вина. "
        "Вино, названное покупателем (латиницей, кириллицей или с опечаткой), ищи по name, прежде чем сказать, "
        "что его нет. Что покупатель исключил («не сухое», «только не итальянское», «без шардоне») — в exclude_*; "
        "«самое дорогое» / «самое дешёвое» — sort, а не цена. Ответ говорит, сколько вин подошло (matched)."
    ),
    parameters=SearchFilters,
)
SEMANTIC_SEARCH = LlmTool(
    name="semantic_search",
    description=(
        "Семантический поиск вин по описанию, настроению или вкусовым предпочтениям. Используй когда "
        "пользователь описывает вино абстрактно: 'лёгкое и освежающее', 'с нотами ванили', 'элегантное для ужина'. "
        "Принимает те же фильтры, что search_wines: передавай только то, что покупатель назвал сам."
    ),
    parameters=SemanticSearchParameters,
)

LLM_TOOLS: dict[str, LlmTool] = {tool.name: tool for tool in (SEARCH_WINES, SEMANTIC_SEARCH)}
TOOL_SCHEMAS: list[ToolSpec] = [tool.json_schema() for tool in LLM_TOOLS.values()]
