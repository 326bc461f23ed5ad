"""`sommelier catalog import FILE --enrich-llm`: a chat model fills the facts the rules of catalog/enrich.py
could not read from a wine's names (country, region, appellation, grapes, colour, sweetness).

- Only fields still empty after the rules are asked for, and each one filled is listed in the row's
  `inferred`, like the rules' values: the shop's own value always wins.
- The model answers JSON; every value is validated (pydantic) against the language layer's vocabularies
  (countries, regions, appellations, grapes, the catalogue's colours and sweetness). A value outside them is
  dropped and counted, never imported.
- Answers are cached by a hash of the model and the row's normalised text, in the state dir, so a re-import
  asks nothing; rows are sent BATCH_ROWS per call.
- Never price, stock, producer, vintage or a description: a model's guess at those would be read to customers
  as the shop's word.

It lives in the dev package, not in `catalog/`: `catalog` sits beside `agent` in the layers and may not
import its LLM port (docs/architecture.md §3), and the deployed package never imports `sommelier_dev`, so
neither the catalogue-drop function nor a customer's turn can reach this pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError
from sommelier import language
from sommelier.agent.llm.port import ChatLLM, LLMError, LLMLedger, LLMMessage
from sommelier.catalog.enrich import empty
from sommelier.domain.pricing import LLMPrice
from sommelier.domain.records import Sweetness, WineType
from sommelier.domain.wire import JSONObject
from sommelier.language import knowledge

LLM_FIELDS = ("country", "region", "appellation", "grape_varieties", "wine_type", "sweetness")
BATCH_ROWS = 20  # rows per call: one system prompt shared by many rows keeps the cost low
CACHE_FILE = "catalog_llm_cache.json"
CALL_TIMEOUT_S = 120.0


def _known_country(value: str) -> str:
    found = language.country(value, fuzzy=False)
    if found is None:
        raise ValueError("такой страны нет в словаре")
    return found.name


def _known_region(value: str) -> str:
    found = language.region(value)
    if found is not None:
        return found.name
    place = knowledge.appellation(value)  # a model may name the appellation's wider region by a place in it
    if place is not None and place.region:
        return place.region
    raise ValueError("такого региона нет в словаре")


def _known_appellation(value: str) -> str:
    place = knowledge.appellation(value)
    if place is None:
        raise ValueError("not an appellation the wine knowledge holds")
    return place.name


def _known_grape(value: str) -> str:
    found = language.grape(value, fuzzy=False)
    if found is None:
        raise ValueError("такого сорта нет в словаре")
    return found.name


def _style_word(position: int) -> Callable[[Any], Any]:
    """A colour or sweetness written in words («красное», «брют») as the catalogue's value."""

    def read(value: Any) -> Any:
        said = language.style_in_words(value)[position] if isinstance(value, str) else None
        return said or value

    return read


Text = Annotated[str, AfterValidator(str.strip)]
_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    "country": TypeAdapter(Annotated[Text, AfterValidator(_known_country)]),
    "region": TypeAdapter(Annotated[Text, AfterValidator(_known_region)]),
    "appellation": TypeAdapter(Annotated[Text, AfterValidator(_known_appellation)]),
    "grape": TypeAdapter(Annotated[Text, AfterValidator(_known_grape)]),
    "wine_type": TypeAdapter(Annotated[WineType, BeforeValidator(_style_word(0))]),
    "sweetness": TypeAdapter(Annotated[Sweetness, BeforeValidator(_style_word(1))]),
}


class _Answer(BaseModel):
    """The model's answer: {"wines": [{"id": 0, "country": …}, …]}; the values are checked field by field."""

    model_config = ConfigDict(extra="ignore")
    wines: list[dict[str, Any]]


@dataclass
class LlmEnrichmentReport:
    rows_sent: int = 0  # rows asked about (cache hits not included)
    calls: int = 0
    cache_hits: int = 0
    filled: Counter[str] = field(default_factory=Counter)  # field → rows it filled
    dropped: list[str] = field(default_factory=list)  # «field 'value': why», each value refused
    failed_calls: list[str] = field(default_factory=list)  # a call that failed: its rows keep the rules' values
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    cache_error: str = ""  # the cache could not be written


def _place_country(name: str, value: str) -> str | None:
    """The ISO code of the country a canonical region or appellation lies in."""
    if name == "region":
        found = language.region(value)
        if found is not None:
            return found.country
    place = knowledge.appellation(value)
    return place.country if place is not None else None


def _agreeing(facts: dict[str, Any], own_country: str, dropped: list[str]) -> dict[str, Any]:
    """The facts without a region or appellation in another country than the row's (the shop's or the model's)."""
    country = language.country(own_country or facts.get("country") or "", fuzzy=False)
    if country is None:
        return facts
    for name in ("region", "appellation"):
        value = facts.get(name)
        if value and _place_country(name, value) not in (None, country.code):
            dropped.append(f"{name} {value!r}: не в стране вина ({country.name})")
            del facts[name]
    return facts


def _facts(answer: dict[str, Any], wanted: list[str], dropped: list[str], own_country: str = "") -> dict[str, Any]:
    """The answer's valid values of the wanted fields, canonical; every refused value noted in `dropped`."""
    facts: dict[str, Any] = {}
    for name in wanted:
        raw = answer.get(name)
        if raw in (None, "", []):
            continue
        if name == "grape_varieties":
            grapes: list[str] = []
            for grape in raw if isinstance(raw, list) else [raw]:
                value = _valid("grape", grape, dropped)
                if value and value not in grapes:
                    grapes.append(value)
            if grapes:
                facts[name] = grapes[:20]
        elif (value := _valid(name, raw, dropped)) is not None:
            facts[name] = value
    return _agreeing(facts, own_country, dropped)


def _valid(name: str, raw: Any, dropped: list[str]) -> Any:
    try:
        return _ADAPTERS[name].validate_python(raw)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
        dropped.append(f"{name} {str(raw)[:60]!r}: {reason}")
        return None


def _row_text(item: dict[str, Any], category: str) -> dict[str, Any]:
    """What the model reads of a row: its texts and the facts already known, whitespace normalised."""

    def plain(value: Any) -> Any:
        return " ".join(value.split()) if isinstance(value, str) else value

    text = {"name": plain(item.get("name") or ""), "category": plain(category)}
    if item.get("description"):
        text["description"] = plain(str(item["description"]))[:600]
    text["known"] = {f: plain(item[f]) for f in LLM_FIELDS if not empty(item.get(f))}
    return text


def cache_key(model: str, row_text: dict[str, Any], wanted: list[str]) -> str:
    """sha256 of the model, the instructions, the row's normalised text and the asked fields: a changed row or
    a changed prompt is asked again."""
    body = json.dumps(
        {"model": model, "prompt": _SYSTEM, "row": row_text, "fields": wanted}, ensure_ascii=False, sort_keys=True
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


_SYSTEM = (
    "You fill missing facts of wines in a Russian wine shop's catalogue, from each wine's name, category and"
    ' description. Answer only JSON: {"wines": [{"id": <the row\'s id>, <field>: <value>, ...}]}, one object'
    ' per row, with only the fields in that row\'s "fill" list. Fields: country and region (Russian names, «Франция»,'
    " «Бургундия»), appellation (the protected name, «Шабли»), grape_varieties (a list of grape names), wine_type"
    " (one of red, white, rose, sparkling), sweetness (one of dry, semi_dry, semi_sweet, sweet). Leave a field"
    " out when the texts do not let a wine expert be sure of it: a guess is worse than nothing."
)

_SCHEMA: JSONObject = {
    "type": "json_schema",
    "json_schema": {
        "name": "wine_facts",
        "schema": {
            "type": "object",
            "properties": {"wines": {"type": "array", "items": {"type": "object"}}},
            "required": ["wines"],
        },
    },
}


class LlmEnrichment:
    """The `more_enrichment` pass of catalog.importer.prepare_rows, with its report."""

    def __init__(self, llm: ChatLLM, price: LLMPrice, state_dir: Path, *, batch_rows: int = BATCH_ROWS):
        self.llm = llm
        self.price = price
        self.cache_path = Path(state_dir) / CACHE_FILE
        self.batch_rows = batch_rows
        self.report = LlmEnrichmentReport()
        self.on_progress: Callable[[str, int, int], None] = lambda stage, done, total: None
        self._cache: dict[str, dict[str, Any]] = self._load_cache()

    def __call__(self, rows: list[tuple[dict[str, Any], str]]) -> None:
        asked: list[tuple[dict[str, Any], list[str], dict[str, Any], str]] = []
        for item, category in rows:
            wanted = [f for f in LLM_FIELDS if empty(item.get(f))]
            if not wanted:
                continue
            text = _row_text(item, category)
            key = cache_key(self.llm.model, text, wanted)
            if key in self._cache:
                self.report.cache_hits += 1
                self._fill(item, self._cache[key])
            else:
                asked.append((item, wanted, text, key))
        for start in range(0, len(asked), self.batch_rows):
            self._ask(asked[start : start + self.batch_rows])
            self.on_progress("llm", min(start + self.batch_rows, len(asked)), len(asked))

    def _ask(self, batch: list[tuple[dict[str, Any], list[str], dict[str, Any], str]]) -> None:
        rows = [{"id": i, **text, "fill": wanted} for i, (_, wanted, text, _) in enumerate(batch)]
        messages: list[LLMMessage] = [
            {"role": "system", "content": _SYSTEM},
            {"role": "user", "content": json.dumps({"wines": rows}, ensure_ascii=False)},
        ]
        self.report.rows_sent += len(batch)
        self.report.calls += 1
        ledger = LLMLedger()
        try:
            reply = self.llm.complete(
                messages, final=True, response_format=_SCHEMA, deadline=_deadline(), ledger=ledger
            )
            answers = _Answer.model_validate_json(_json_text(reply.content or "")).wines
        except (LLMError, ValidationError, ValueError) as exc:
            self.report.failed_calls.append(f"строк {len(batch)}: {str(exc)[:200]}")
            return
        finally:
            self._count(ledger)
        by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
        for i, (item, wanted, _, key) in enumerate(batch):
            facts = _facts(by_id.get(i) or {}, wanted, self.report.dropped, str(item.get("country") or ""))
            self._cache[key] = facts  # «nothing sure» is an answer too: not asked again
            self._fill(item, facts)
        self._save_cache()

    def _fill(self, item: dict[str, Any], facts: dict[str, Any]) -> None:
        inferred = item.setdefault("inferred", [])
        for name, value in facts.items():
            if empty(item.get(name)):  # the shop's value and the rules' value win
                item[name] = list(value) if isinstance(value, list) else value
                inferred.append(name)
                self.report.filled[name] += 1

    def _count(self, ledger: LLMLedger) -> None:
        usage = ledger.usage
        self.report.prompt_tokens += usage.prompt_tokens
        self.report.completion_tokens += usage.completion_tokens
        self.report.cached_tokens += usage.cached_tokens
        estimated = self.price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
        self.report.cost_usd += usage.cost_usd if usage.cost_usd is not None else estimated

    def _load_cache(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.cache_path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}  # no cache yet, or an unreadable one: asked again, then rewritten
        return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}

    def _save_cache(self) -> None:
        """Written after every call, atomically: an interrupted import keeps what it paid for."""
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=self.cache_path.parent, prefix=".llm-cache-", suffix=".json")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(self._cache, out, ensure_ascii=False)
            os.replace(temp, self.cache_path)
        except OSError as exc:  # the import goes on; the next one asks again
            self.report.cache_error = f"{self.cache_path}: {exc.strerror or exc}"


def _deadline() -> float:
    return time.monotonic() + CALL_TIMEOUT_S


def _json_text(content: str) -> str:
    """The JSON object of a reply, without a Markdown fence a model may wrap it in."""
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the answer holds no JSON object")
    return content[start : end + 1]
