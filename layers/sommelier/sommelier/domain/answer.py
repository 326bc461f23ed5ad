"""The structured answer and the parse result (docs/architecture.md §6)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ResponseType = Literal["recommendation", "informational", "off_topic"]
GuardType = Literal["off_topic", "prompt_injection", "social_engineering"]

MAX_WINES = 3
MAX_INTRO = 1000
MAX_DESCRIPTION = 800  # leaves room for the name line within Telegram's 1024-character caption
MAX_CLOSING = 500


class WineRecommendation(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    wine_name: str = Field(min_length=1, max_length=300, description="Имя вина точно как в каталоге")
    description: str = Field(
        min_length=1, max_length=MAX_DESCRIPTION, description="Почему это вино подходит, 2-3 предложения"
    )
    wine_id: str | None = Field(default=None, description="id вина из результатов инструмента")

    @field_validator("wine_id")
    @classmethod
    def _uuid_or_none(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        try:
            return str(uuid.UUID(value))
        except ValueError as exc:
            raise ValueError("wine_id must be the id of a wine from the tool results") from exc


class SommelierResponse(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    response_type: ResponseType
    intro: str = Field(min_length=1, max_length=MAX_INTRO, description="1-2 предложения")
    wines: list[WineRecommendation] = Field(default_factory=list, max_length=MAX_WINES)
    closing: str = Field(min_length=1, max_length=MAX_CLOSING, description="вопрос или фраза для продолжения диалога")
    guard_type: GuardType | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SommelierResponse:
        if self.response_type == "recommendation" and not self.wines:
            raise ValueError("a recommendation must contain at least one wine")
        if self.response_type != "recommendation" and self.wines:
            raise ValueError(f"a {self.response_type} answer must not contain wines")
        if self.response_type == "off_topic" and self.guard_type is None:
            raise ValueError("guard_type is required when response_type is off_topic")
        if self.guard_type is not None and self.response_type != "off_topic":
            raise ValueError("guard_type is only allowed with response_type off_topic")
        # A wine is its id: two wines may share a name (two producers' «Каберне»); a name counts only
        # for a recommendation that has no id yet.
        keys = [w.wine_id or f"name:{w.wine_name.casefold()}" for w in self.wines]
        if len(set(keys)) != len(keys):
            raise ValueError("the same wine is recommended twice")
        return self

    def wine_ids(self) -> list[str]:
        return [w.wine_id for w in self.wines if w.wine_id]


def _strict(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """One node of pydantic's JSON schema in the strict structured-output form: every key required,
    no extra keys, an optional value as an explicit null, and only the keywords strict mode accepts."""
    if "$ref" in schema:
        return _strict(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:  # X | None
        (option,) = [o for o in schema["anyOf"] if o.get("type") != "null"]
        node = _strict(option, defs)
        node["type"] = [node["type"], "null"]
        if "enum" in node:
            node["enum"] = [*node["enum"], None]
        if "description" in schema:
            node["description"] = schema["description"]
        return node
    if schema.get("type") == "object":
        properties = {name: _strict(value, defs) for name, value in schema["properties"].items()}
        return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}
    node = {"type": schema.get("type", "string")}
    if schema.get("type") == "array":
        node["items"] = _strict(schema["items"], defs)
        if "maxItems" in schema:
            node["maxItems"] = schema["maxItems"]
    for key in ("enum", "description"):
        if key in schema:
            node[key] = schema[key]
    return node


def response_json_schema() -> dict[str, Any]:
    """The schema sent as response_format, derived from SommelierResponse (strict mode)."""
    schema = SommelierResponse.model_json_schema()
    return {"name": "SommelierResponse", "strict": True, "schema": _strict(schema, schema.get("$defs", {}))}


RESPONSE_JSON_SCHEMA = response_json_schema()


@dataclass
class ParsedResponse:
    """What the renderer consumes, from structured JSON or the legacy text format."""

    intro: str = ""
    wines: list[str] = field(default_factory=list)
    wine_names: list[str] = field(default_factory=list)
    closing: str = ""
    is_structured: bool = False
    guard_type: str | None = None

    @classmethod
    def from_response(cls, response: SommelierResponse) -> ParsedResponse:
        return cls(
            intro=response.intro,
            wines=[w.description for w in response.wines],
            wine_names=[w.wine_name for w in response.wines],
            closing=response.closing,
            is_structured=True,
            guard_type=response.guard_type,
        )


@dataclass
class ParseResult:
    """Rendered text and wine ids on success, or an error to feed back to the model."""

    text: str = ""
    wine_ids: list[str] = field(default_factory=list)
    error: str | None = None
    response: SommelierResponse | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


MAX_STORED_CHARS = 2000  # of one message's text in the history


def answer_as_text(response: SommelierResponse) -> str:
    """The answer as history text (docs/architecture.md): intro, each wine, closing, separated by blank lines."""
    blocks = [response.intro]
    blocks += [f"{w.wine_name}: {w.description}" for w in response.wines]
    blocks.append(response.closing)
    return "\n\n".join(b.strip() for b in blocks if b.strip())


def truncate_for_storage(text: str, limit: int = MAX_STORED_CHARS) -> str:
    """Cut at the last blank line within the limit, else the last '. ', else hard."""
    if len(text) <= limit:
        return text
    window = text[:limit]
    cut = window.rfind("\n\n")
    if cut > 0:
        return window[:cut].rstrip()
    cut = window.rfind(". ")
    if cut > 0:
        return window[: cut + 1]
    return window
