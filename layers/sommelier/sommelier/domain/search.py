"""A search of the catalogue: its arguments, defined once, and its result.

The argument dataclasses are both the LLM's JSON schema (agent/tools.py) and what the tool function
validates (the functions below, on the JSON the model or a caller sent):

- A value of the wrong type is a clear error (the model can correct its call).
- An enum value outside the enum is ignored and left out of `filters_applied`.
- A price that is not positive is ignored; price_min > price_max → price_min is ignored.
- Empty strings count as absent.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import Field, dataclass, field, fields, replace
from typing import Any, NamedTuple

from sommelier.domain.errors import ArgumentError as ArgumentError  # the operations' argument errors
from sommelier.domain.wine import SWEETNESS_LEVELS, WINE_TYPES, Wine, WinePhoto
from sommelier.domain.wire import OMIT_EMPTY
from sommelier.domain.wire import require_object as require_object
from sommelier.language import filter_words, normalize
from sommelier.settings import EMBEDDING_DIMENSIONS

MAX_FILTER_TEXT = 200
MAX_QUERY_TEXT = 1000
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_IDS = 200
# How search_wines orders its wines: dearest first, cheapest first, or by how well a named wine matches.
SORT_ORDERS = ("price_desc", "price_asc", "relevance")


def llm_parameter(description: str, *, enum: tuple[str, ...] | None = None, required: bool = False) -> Any:
    """A dataclass field the LLM sees: its JSON schema comes from the field (agent/tools.py)."""
    return field(default=None, metadata={"llm": {"description": description, "enum": enum, "required": required}})


def search_parameter(key: str, *, enum: tuple[str, ...] | None = None) -> Any:
    """A search filter the LLM sees, described in the words of the filters' table (language/filter_words.py)."""
    return llm_parameter(filter_words.described(key), enum=enum)


@dataclass
class SearchFilters:
    """search_wines' arguments: the fields with `llm_parameter` are its JSON schema; the rest are the caller's.
    Each filter is a row of the filters' table (language/data/filter_words.json), which says it in words."""

    wine_type: str | None = search_parameter("wine_type", enum=WINE_TYPES)
    sweetness: str | None = search_parameter("sweetness", enum=SWEETNESS_LEVELS)
    grape_variety: str | None = search_parameter("grape_variety")
    price_min: float | None = search_parameter("price_min")
    price_max: float | None = search_parameter("price_max")
    country: str | None = search_parameter("country")
    region: str | None = search_parameter("region")
    food_pairing: str | None = search_parameter("food_pairing")
    name: str | None = search_parameter("name")
    exclude_country: str | None = search_parameter("exclude_country")
    exclude_sweetness: str | None = search_parameter("exclude_sweetness", enum=SWEETNESS_LEVELS)
    exclude_wine_type: str | None = search_parameter("exclude_wine_type", enum=WINE_TYPES)
    exclude_grape: str | None = search_parameter("exclude_grape")
    exclude_region: str | None = search_parameter("exclude_region")
    sort: str | None = search_parameter("sort", enum=SORT_ORDERS)
    limit: int = DEFAULT_LIMIT
    exclude_ids: list[str] = field(default_factory=list)


@dataclass
class SemanticSearchParameters(SearchFilters):
    """semantic_search's arguments: a description plus every filter of search_wines, applied by the same SQL
    (the caller adds the embedding). The model may narrow a mood by the customer's stated constraints in one
    call, and the database, not the caller, decides which wines meet them."""

    query: str | None = llm_parameter("Текстовое описание желаемого вина на естественном языке", required=True)
    # The caller's: rank by the query's words as well as its meaning (reciprocal rank fusion, toolfn/search.py).
    hybrid: bool = False


@dataclass
class SemanticRequest:
    query: str
    embedding: list[float]
    embedding_model: str
    filters: SearchFilters
    hybrid: bool = False  # fuse the vector ranking with the full-text one

    def as_arguments(self) -> dict[str, object]:
        """The tool function's arguments: the query and its vector beside the filters."""
        from sommelier.domain.wire import to_wire

        return {
            **to_wire(self.filters),
            "query": self.query,
            "embedding": self.embedding,
            "embedding_model": self.embedding_model,
            **({"hybrid": True} if self.hybrid else {}),
        }


@dataclass(frozen=True)
class SearchResult:
    """What both search tools answer: the wines, how many matched in all, the filters that were applied, and
    the found wines' photo keys beside them (``photos``: the agent keeps them for the cards it sends; the model
    never reads them)."""

    found: int
    matched: int
    wines: list[Wine]
    filters_applied: dict[str, str | int | float] = field(default_factory=dict)
    matched_more: bool = field(default=False, metadata=OMIT_EMPTY)
    # semantic_search: the filters it read from the description itself because the caller passed none.
    read_from_query: list[str] = field(default_factory=list, metadata=OMIT_EMPTY)
    photos: dict[str, WinePhoto] = field(default_factory=dict, metadata=OMIT_EMPTY)

    def wines_with_photos(self) -> list[Wine]:
        """The wines with the photo keys that came beside them."""
        return [
            replace(wine, image_key=photo.image_key, telegram_file_id=photo.telegram_file_id)
            if (photo := self.photos.get(wine.id)) is not None
            else wine
            for wine in self.wines
        ]

    def for_model(self) -> dict[str, object]:
        """The result as the model reads it: no photo keys."""
        from sommelier.domain.wire import to_wire

        view: dict[str, object] = to_wire(self)  # a named tuple's wire form is always an object
        view.pop("photos", None)
        return view


class WineList(NamedTuple):
    """Wines by id, in the order asked; ids the catalogue does not have are in ``missing``."""

    wines: list[Wine]
    missing: list[str]


class ToolRequest(NamedTuple):
    """One LLM tool call as the tool function receives it: its name and the arguments as the model wrote
    them (a JSON object the tool function validates: one place decides what is a valid argument)."""

    tool: str
    arguments: dict[str, object]


def optional_text(args: dict[str, Any], name: str, max_length: int = MAX_FILTER_TEXT) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be a string")
    value = " ".join(value.split())
    if not value:
        return None
    if len(value) > max_length:
        raise ArgumentError(f"{name} is too long (at most {max_length} characters)")
    if "\x00" in value:
        raise ArgumentError(f"{name} contains a NUL character")
    return value


def _enum(args: dict[str, Any], name: str, allowed: tuple[str, ...], synonyms: dict[str, str]) -> str | None:
    value = args.get(name)
    if value is None or not isinstance(value, str):
        return None  # an enum value outside the enum is ignored, not an error
    key = value.strip().lower()
    key = synonyms.get(key, synonyms.get(normalize(key), key))
    return key if key in allowed else None


def optional_price(args: dict[str, Any], name: str) -> float | None:
    value = args.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ArgumentError(f"{name} must be a number of roubles")
    if isinstance(value, str):
        cleaned = value.replace(" ", "").replace("\u00a0", "").replace("₽", "").replace(",", ".")
        try:
            value = float(cleaned)
        except ValueError as exc:
            raise ArgumentError(f"{name} must be a number of roubles") from exc
    if not isinstance(value, (int, float)):
        raise ArgumentError(f"{name} must be a number of roubles")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        return None  # a non-positive or infinite price filters nothing sensible
    return min(number, 1e9)


def optional_limit(args: dict[str, Any], default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    value = args.get("limit")
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArgumentError("limit must be a whole number")
    return max(1, min(int(value), maximum))


def uuid_list(args: dict[str, Any], name: str, *, required: bool = False) -> list[str]:
    value = args.get(name)
    if value is None:
        if required:
            raise ArgumentError(f"{name} is required")
        return []
    if not isinstance(value, list):
        raise ArgumentError(f"{name} must be a list of wine ids")
    if len(value) > MAX_IDS:
        raise ArgumentError(f"{name} has too many ids (at most {MAX_IDS})")
    ids: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise ArgumentError(f"{name} must contain wine ids (strings)")
        try:
            ids.append(str(uuid.UUID(item)))
        except ValueError as exc:
            raise ArgumentError(f"{name} contains an invalid wine id: {item[:60]!r}") from exc
    return list(dict.fromkeys(ids))


def _field_value(args: dict[str, Any], item: Field[Any]) -> Any:
    """Validate one argument by its declared field (the dataclass field is the definition): an enum by its
    values and their spellings in the filters' table («красное» → red), a price, the limit, the ids, a text."""
    name = item.name
    allowed = item.metadata["llm"]["enum"] if "llm" in item.metadata else None
    if allowed:
        return _enum(args, name, allowed, filter_words.value_spellings(name))
    if name == "limit":
        return optional_limit(args)
    if name == "exclude_ids":
        return uuid_list(args, name)
    if "float" in str(item.type):  # a price
        return optional_price(args, name)
    return optional_text(args, name)


def search_filters(arguments: Any) -> SearchFilters:
    args = require_object(arguments)
    values = {f.name: _field_value(args, f) for f in fields(SearchFilters)}
    filters = SearchFilters(**{name: value for name, value in values.items() if value is not None})
    if filters.price_min is not None and filters.price_max is not None and filters.price_min > filters.price_max:
        filters.price_min = None  # a reversed range: the upper bound is what the customer means
    if filters.exclude_wine_type and filters.exclude_wine_type == filters.wine_type:
        filters.exclude_wine_type = None  # «красное, но не красное»: what is asked for wins
    if filters.exclude_sweetness and filters.exclude_sweetness == filters.sweetness:
        filters.exclude_sweetness = None
    if filters.exclude_region and normalize(filters.exclude_region) == normalize(filters.region or ""):
        filters.exclude_region = None
    return filters


def finite_vector(embedding: Any) -> list[float]:
    """An embedding as EMBEDDING_DIMENSIONS finite floats, or an ArgumentError saying what is wrong."""
    if not isinstance(embedding, list) or len(embedding) != EMBEDDING_DIMENSIONS:
        raise ArgumentError(f"embedding must be a list of {EMBEDDING_DIMENSIONS} numbers")
    vector: list[float] = []
    for item in embedding:
        if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
            raise ArgumentError("embedding must contain only finite numbers")
        vector.append(float(item))
    return vector


def semantic_request(arguments: Any) -> SemanticRequest:
    args = require_object(arguments)
    query = optional_text(args, "query", MAX_QUERY_TEXT)
    if not query:
        raise ArgumentError("query is required: describe the wine in words")
    embedding = args.get("embedding")
    if embedding is None:
        raise ArgumentError("embedding is required: the caller embeds the query and passes the vector")
    vector = finite_vector(embedding)
    if not any(vector):
        raise ArgumentError("embedding must not be all zeros")
    model = optional_text(args, "embedding_model")
    if not model:
        raise ArgumentError("embedding_model is required: the name of the model that made the embedding")
    return SemanticRequest(
        query=query,
        embedding=vector,
        embedding_model=model,
        filters=search_filters(args),
        hybrid=args.get("hybrid") is True,
    )


def single_uuid(args: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None:
        if required:
            raise ArgumentError(f"{name} is required")
        return None
    (wine_id,) = uuid_list({name: [value]}, name)
    return wine_id
