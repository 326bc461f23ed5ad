"""The structured answer and the parse result (docs/architecture.md §6)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ResponseType = Literal["recommendation", "informational", "off_topic"]
GuardType = Literal["off_topic", "prompt_injection", "social_engineering"]

MAX_WINES = 3
# What an answer may hold when it is accepted: today's shape (a name and a 2–3 sentence description per
# wine) still validates, so an older prompt or a model that ignores the schema is not refused for length.
MAX_INTRO = 1000
MAX_DESCRIPTION = 800  # leaves room for the name line within Telegram's 1024-character caption
MAX_CLOSING = 500

# What the model is asked to write (the schema sent as response_format, and the prompt): the card's facts come
# from the catalogue, so the model writes only a short intro, one reason per wine and a short closing.
# An informational answer («что такое танины») is its intro, hence the intro's larger room.
SCHEMA_INTRO = 500
SCHEMA_REASON = 240  # two short sentences
SCHEMA_CLOSING = 150
REF_PATTERN = r"^w[1-9][0-9]?$"  # a candidate's short reference: w1, w2 … (agent/refs.py)
_REF = re.compile(REF_PATTERN)


def is_ref(value: object) -> bool:
    return isinstance(value, str) and _REF.match(value.strip().lower()) is not None


class WineRecommendation(BaseModel):
    """One wine of an answer. The model names it by its reference (``ref``: w1, w2 …) and writes one reason;
    today's shape (a UUID ``wine_id``, ``wine_name`` and ``description``) is read too: the name is ignored
    (grounding puts the catalogue's in), the description is the reason. ``facts`` is the catalogue's text for
    the card (grapes, tasting notes), set by the agent after grounding; never read from the model."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    wine_name: str = Field(default="", max_length=300, description="Имя вина из каталога (заполняется по ref)")
    description: str = Field(
        min_length=1, max_length=MAX_DESCRIPTION, description="Почему это вино подходит, 1-2 коротких предложения"
    )
    wine_id: str | None = Field(default=None, description="id вина из результатов инструмента")
    ref: str | None = Field(default=None, description="ссылка на вино из кандидатов: w1, w2 …")
    facts: str = ""

    @model_validator(mode="before")
    @classmethod
    def _today_or_new_shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        data.pop("facts", None)  # the catalogue's text is the agent's to add, never the model's
        reason = data.pop("reason", None)
        if not data.get("description") and isinstance(reason, str):
            data["description"] = reason
        if is_ref(data.get("wine_id")) and not data.get("ref"):  # a ref written in today's field
            data["ref"] = data.pop("wine_id")
        if data.get("wine_name") is None:
            data["wine_name"] = ""
        return data

    @field_validator("wine_id")
    @classmethod
    def _uuid_or_none(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        try:
            return str(uuid.UUID(value))
        except ValueError as exc:
            raise ValueError("wine_id must be the id of a wine from the tool results") from exc

    @field_validator("ref")
    @classmethod
    def _ref_or_none(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if not is_ref(value):
            raise ValueError("ref must be a wine's reference from the candidates (w1, w2 …)")
        return value.strip().lower()

    @model_validator(mode="after")
    def _named(self) -> WineRecommendation:
        if not (self.wine_id or self.ref or self.wine_name):
            raise ValueError("a wine needs its ref (w1, w2 …), or a wine_id or wine_name")
        return self

    @property
    def reason(self) -> str:
        return self.description

    @property
    def key(self) -> str:
        """What makes two recommendations the same wine before grounding: the id, else the ref, else the name."""
        if self.wine_id:
            return self.wine_id
        if self.ref:
            return f"ref:{self.ref}"
        return f"name:{self.wine_name.casefold()}"


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
        # for a recommendation that has no id or ref yet.
        keys = [w.key for w in self.wines]
        if len(set(keys)) != len(keys):
            raise ValueError("the same wine is recommended twice")
        return self

    def wine_ids(self) -> list[str]:
        return [w.wine_id for w in self.wines if w.wine_id]


SchemaLengths = Literal["max_length", "pattern"]


def _text(limit: int, description: str, lengths: SchemaLengths) -> dict[str, Any]:
    """A string of at most ``limit`` characters: maxLength, or the same as an anchored pattern for a strict
    mode that refuses maxLength."""
    node: dict[str, Any] = {"type": "string", "description": description}
    if lengths == "max_length":
        node.update(minLength=1, maxLength=limit)
    else:
        node["pattern"] = f"^[\\s\\S]{{1,{limit}}}$"
    return node


def response_json_schema(lengths: SchemaLengths = "max_length") -> dict[str, Any]:
    """The answer's schema as the model is asked to write it (strict mode: every key required, no extra keys,
    the optional guard as an explicit null), with the lengths it must keep to."""
    wine = {
        "type": "object",
        "additionalProperties": False,
        "required": ["ref", "reason"],
        "properties": {
            "ref": {"type": "string", "pattern": REF_PATTERN, "description": "ссылка вина из кандидатов: w1, w2 …"},
            "reason": _text(SCHEMA_REASON, "почему это вино подходит под запрос: 1–2 коротких предложения", lengths),
        },
    }
    properties: dict[str, Any] = {
        "response_type": {"type": "string", "enum": ["recommendation", "informational", "off_topic"]},
        "intro": _text(SCHEMA_INTRO, "одно короткое предложение; ответ на общий вопрос — до 4 предложений", lengths),
        "wines": {"type": "array", "items": wine, "maxItems": MAX_WINES},
        "closing": _text(SCHEMA_CLOSING, "один короткий вопрос или фраза для продолжения", lengths),
        "guard_type": {
            "type": ["string", "null"],
            "enum": ["off_topic", "prompt_injection", "social_engineering", None],
        },
    }
    schema = {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}
    return {"name": "SommelierResponse", "strict": True, "schema": schema}


RESPONSE_JSON_SCHEMA = response_json_schema()
RESPONSE_JSON_SCHEMA_PATTERNS = response_json_schema("pattern")


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
    checks_failed: list[str] = field(default_factory=list)  # the sentence checks that removed text

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
