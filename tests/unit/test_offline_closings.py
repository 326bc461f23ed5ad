"""Every closing question the offline writer asks after a recommendation has its yes (writer.CLOSING_OFFERS):
a «да» to it must do what it offered, so a question without an entry there would be read as off-topic."""

from __future__ import annotations

import itertools

from sommelier.offline import closings, writer
from sommelier.offline.reader import QueryIntent

WINE_TYPES = (None, "red", "white", "rose", "sparkling")
SWEETNESS = (None, "dry", "semi_dry", "semi_sweet", "sweet")
PRICES = ({}, {"price_max": 2000}, {"price_min": 3000}, {"price_min": 1000, "price_max": 2000})
FOODS = (None, "стейк")
QUERIES = ("красное к стейку", "что-нибудь лёгкое", "до 2000", "подарок", "белое сухое", "игристое")


def test_every_closing_question_has_its_yes():
    asked = set()
    for wine_type, sweetness, prices, food, query in itertools.product(WINE_TYPES, SWEETNESS, PRICES, FOODS, QUERIES):
        filters = {"wine_type": wine_type, "sweetness": sweetness, "food_pairing": food, **prices}
        intent = QueryIntent(kind="recommendation", filters={k: v for k, v in filters.items() if v is not None})
        closing = closings.closing_question(intent, query)
        asked.add(closing)
        assert closing in dict(writer.CLOSING_OFFERS), (filters, query, closing)
    assert len(asked) >= 6, asked  # the combinations above reach most of the questions
