"""A rule-based reading of a customer's message (docs/architecture.md, the offline responder).

`read_query(text, previous)` turns a Russian (or English / transliterated) message into a
`QueryIntent`: what kind of message it is, the `search_wines` filters it states, the mood
words for `semantic_search`, a glossary topic for informational questions, and how a short
follow-up ("а подешевле?", "а белое?", "ещё") changes the previous request.

The rules, in order:

1. Greetings, thanks and help requests with nothing else in them are answered as such.
2. A definitional question ("что такое танины", "при какой температуре подавать") is
   informational, even when it mentions wine styles.
3. Type, sweetness, grape and wine words are strong wine cues; price, country, region,
   food and mood are weak ones. A message about something else ("погода", "код",
   "телефон") is off-topic unless it has a strong wine cue; a message without any cue and
   without a request verb is off-topic too.
4. A follow-up (it starts with "а"/"и"/"тогда", asks for "ещё", "другие", "подешевле",
   "подороже", and a previous recommendation exists) keeps the previous filters and mood
   and overrides what it names.

Filter values are the catalogue's words: wine_type/sweetness enums, canonical Russian grape
and country names, Russian region names, a short dish word ("стейк", "рыба").

Each rule is a module of its own: the message's text (`message`), the request and its filters (`intent`),
the wine's type, sweetness and grape (`style_and_grape`), places (`places`), food (`food`), the budget
(`budget`), negations and what they rule out (`negations`, `exclusions`), the mood words (`mood_request`),
the message's kind (`message_kind`), a wine asked for by name (`wine_names`) and the dialogue's follow-ups
(`follow_ups`); `filters` reads a message's filters in the order they mark its words. This module reads a
message with them and names what the responder, the writer and the weekly report use.
"""

from __future__ import annotations

from sommelier.offline.budget import CHEAP_PRICE_MAX as CHEAP_PRICE_MAX
from sommelier.offline.budget import PREMIUM_PRICE_MIN as PREMIUM_PRICE_MIN
from sommelier.offline.budget import SOLID_PRICE_MIN as SOLID_PRICE_MIN
from sommelier.offline.filters import read_filters
from sommelier.offline.follow_ups import continues_previous, recommendation
from sommelier.offline.follow_ups import offered as offered
from sommelier.offline.intent import EXCLUSIONS as EXCLUSIONS
from sommelier.offline.intent import FILTER_KEYS as FILTER_KEYS
from sommelier.offline.intent import MAX_READ_CHARS
from sommelier.offline.intent import Kind as Kind
from sommelier.offline.intent import PriceDirection as PriceDirection
from sommelier.offline.intent import QueryIntent as QueryIntent
from sommelier.offline.intent import describe_filters as describe_filters
from sommelier.offline.message import prepare
from sommelier.offline.message_kind import kind_without_previous
from sommelier.offline.places import REGION_COUNTRY as REGION_COUNTRY
from sommelier.offline.places import REGION_GENITIVE as REGION_GENITIVE
from sommelier.offline.wine_names import named_request, wine_named


def read_query(text: str, previous: QueryIntent | None = None) -> QueryIntent:
    """Read one customer message; `previous` is the intent of the customer's previous request."""
    raw, t = prepare((text or "")[:MAX_READ_CHARS])
    reading = read_filters(raw, t)
    kind, topic = kind_without_previous(raw, t, reading)
    follow_up = continues_previous(kind, t, reading, previous)
    if follow_up:
        kind = "recommendation"
    named = wine_named(text, t, reading) if kind in ("recommendation", "off_topic") else None
    if named is not None:
        return named_request(reading, *named)
    if kind != "recommendation":
        return QueryIntent(kind=kind, filters={}, mood=None, topic=topic)
    return recommendation(reading, previous if follow_up else None)
