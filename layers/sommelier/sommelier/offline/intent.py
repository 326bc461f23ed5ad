"""What the offline reader makes of a message: the request (`QueryIntent`), the filters one message states
(`Reading`), and the search filters both speak of, in the order the filters' table lists them
(language/data/filter_words.json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from sommelier import language
from sommelier.language import filter_words, pairing

if TYPE_CHECKING:
    from sommelier.offline.party import Party

Kind = Literal["recommendation", "greeting", "thanks", "informational", "off_topic", "help"]
PriceDirection = Literal["cheaper", "pricier"]

FILTER_KEYS = filter_words.filter_keys()
# A value asked for and the same kind of value ruled out: naming one takes back the other.
EXCLUSIONS = filter_words.ruled_out_by()
MAX_READ_CHARS = 2000  # a request longer than this is read from its beginning


@dataclass
class QueryIntent:
    kind: Kind
    filters: dict[str, Any] = field(default_factory=dict)  # search_wines arguments
    mood: str | None = None  # words for semantic_search (mood, occasion, taste)
    topic: str | None = None  # glossary key for informational questions
    follow_up: bool = False
    more: bool = False  # "ещё", "другие варианты": the same request, other wines
    price_direction: PriceDirection | None = None  # "подешевле" / "подороже"
    shown_prices: list[float] = field(default_factory=list)  # set by the responder on `previous`
    stated: tuple[str, ...] = ()  # filter keys this very message stated (the rest were inherited)
    wine_name: str | None = None  # a wine asked for by name («Есть у вас Petrus 2010?»), as written
    wine_vintage: int | None = None  # the vintage named with it
    known_wine: language.NamedWine | None = None  # what the language layer knows about that name
    party: Party | None = None  # «на 8 человек, 6000 на всех»: the guests, and a total budget (offline/party.py)


@dataclass
class Reading:
    """What one message states by itself, before the previous request is taken into account."""

    filters: dict[str, Any]
    mood: str | None
    strong: bool  # a type, sweetness, grape or wine word: surely about wine
    weak: bool  # a price, place, dish or mood: about wine if nothing says otherwise
    direction: PriceDirection | None
    more: bool
    party: Party | None = None


def describe_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """The filters as search_wines arguments (no extra keys)."""
    return {k: filters[k] for k in FILTER_KEYS if filters.get(k) is not None}


def relaxable(key: str, intent: QueryIntent) -> bool:
    """Region is soft; so is a dish whose suitable style the table does not know (with one it does know,
    wines of another style would not suit it: «к тирамису» never gets dry wines); a grape or country is
    relaxed only when inherited, never when just stated."""
    if key == "food_pairing":
        return pairing.dish_style(str(intent.filters.get("food_pairing") or "")) is None
    if key == "region":
        return True
    return key not in intent.stated
