"""The filters, mood and wine cues one message states by itself (the reader's rule 3), each family read by
its own module, in the order their words are claimed."""

from __future__ import annotations

from typing import Any

from sommelier.language.filter_words import value_cues
from sommelier.offline.budget import price_filters, read_budget, read_superlative
from sommelier.offline.exclusions import read_exclusions
from sommelier.offline.food import read_food
from sommelier.offline.intent import Reading
from sommelier.offline.message import Spans
from sommelier.offline.message_kind import MORE, WINE_WORD
from sommelier.offline.mood_request import read_mood
from sommelier.offline.negations import without_preferences
from sommelier.offline.party import read_party
from sommelier.offline.places import read_appellation, read_country, read_region
from sommelier.offline.style_and_grape import read_grape, read_sweetness, read_wine_type

_TYPE_CUES = value_cues("wine_type")


def read_filters(raw: str, t: str) -> Reading:
    """The filters, mood and wine cues of a message. Each family marks the words it explains, so the order
    matters: a word read as a grape is no region or colour, and no word a filter explains is a mood word."""
    t = without_preferences(t)
    spans = Spans()
    # An appellation longer than a grape's name inside it («Брунелло ди Монтальчино», not the grape «брунелло»).
    appellation = read_appellation(t, spans)
    found = {
        # Grapes first: "Пино Нуар" must not be read as anything else, "Красностоп" is not "красное".
        "grape_variety": read_grape(t, spans),
        "region": appellation or read_region(t, spans),
        "wine_type": read_wine_type(t, spans),
        "sweetness": read_sweetness(t, spans),
        "country": read_country(t, spans),
        "food_pairing": read_food(t, spans),
    }
    filters: dict[str, Any] = {k: v for k, v in found.items() if v is not None}
    filters.update(read_exclusions(t, filters))
    sort = read_superlative(t, spans)
    price_min, price_max, direction = read_budget(raw, t, spans)
    filters.update(price_filters(price_min, price_max))
    if sort == "best_within":
        sort = "price_desc" if "price_max" in filters else None
    if sort:
        filters["sort"] = sort

    more = bool(MORE.search(t))
    party = read_party(t, spans)
    mood = read_mood(t, spans)
    strong = bool(
        {"wine_type", "sweetness", "grape_variety"} & filters.keys() or WINE_WORD.search(t) or _TYPE_CUES.search(t)
    )
    weak = bool(filters) or mood is not None or direction is not None
    return Reading(filters, mood, strong, weak or party is not None, direction, more, party)
