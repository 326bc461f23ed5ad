"""Russian wording for the offline responder: a valid `SommelierResponse` from an intent and wines.

The text is specific (each description explains the pick from the wine's own data: grape,
region, style, price, pairings, tasting note) and varied (several templates per part,
chosen deterministically from a hash of the query and the wine id, so tests are stable).
The mood's part — its occasions and adjectives, and why a wine fits it — is worded in `offline.mood`.

Each part of an answer is a module of its own: the wording's tools (`wording`), the request said back
(`request_words`), a wine's card (`wine_cards`), the intro (`intros`), the closing question and its offer
(`closings`), the answers about wines (`answers`), the glossary's (`glossary_answers`) and those without
wines (`replies`). This module names what the responder and the tests use.
No markdown or HTML: the Telegram renderer escapes the text.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from sommelier.domain.answer import MAX_INTRO, SommelierResponse
from sommelier.offline.answers import named_absent as named_absent
from sommelier.offline.answers import named_found as named_found
from sommelier.offline.answers import named_unknown as named_unknown
from sommelier.offline.answers import nothing_found as nothing_found
from sommelier.offline.answers import recommendation as recommendation
from sommelier.offline.closings import CLOSING_OFFERS as CLOSING_OFFERS
from sommelier.offline.closings import NO_OFFER_CLOSING as NO_OFFER_CLOSING
from sommelier.offline.closings import OFFER_MARKERS as OFFER_MARKERS
from sommelier.offline.closings import Offer as Offer
from sommelier.offline.closings import pending_offer as pending_offer
from sommelier.offline.glossary_answers import info_offer as info_offer
from sommelier.offline.glossary_answers import informational as informational
from sommelier.offline.glossary_answers import yes_to_info_offer as yes_to_info_offer
from sommelier.offline.intent import QueryIntent
from sommelier.offline.party import quantity_sentence
from sommelier.offline.replies import clarify as clarify
from sommelier.offline.replies import greeting as greeting
from sommelier.offline.replies import help_answer as help_answer
from sommelier.offline.replies import off_topic as off_topic
from sommelier.offline.replies import thanks as thanks
from sommelier.offline.replies import tool_error as tool_error
from sommelier.offline.request_words import country_genitive as country_genitive
from sommelier.offline.request_words import food_dative as food_dative
from sommelier.offline.request_words import genitive_phrase as genitive_phrase
from sommelier.offline.request_words import price_phrase as price_phrase
from sommelier.offline.request_words import request_summary as request_summary
from sommelier.offline.request_words import style_phrase as style_phrase
from sommelier.offline.wine_cards import describe_wine as describe_wine
from sommelier.offline.wine_cards import matching_pairings as matching_pairings
from sommelier.offline.wording import clip
from sommelier.offline.wording import format_price as format_price

MIN_PARTY = 3  # «на двоих» needs no count of bottles


def answer_without_wines(kind: str, topic: str | None, text: str) -> SommelierResponse | None:
    """The answer to a message that asks for no wines: a greeting, thanks, help, a question, off the topic."""
    if kind == "greeting":
        return greeting(text)
    if kind == "thanks":
        return thanks(text)
    if kind == "help":
        return help_answer(text)
    if kind == "informational":
        return informational(topic, text)
    if kind == "off_topic":
        return off_topic(text)
    return None


class _Answered(Protocol):
    response: SommelierResponse


A = TypeVar("A", bound=_Answered)


def for_party(answer: A, intent: QueryIntent) -> A:
    """«на 8 человек»: the number of bottles (and a bottle's budget from a total) said before the answer."""
    party = intent.party
    if party is None or party.guests < MIN_PARTY:
        return answer
    lead = quantity_sentence(party, format_price)
    answer.response = answer.response.model_copy(update={"intro": clip(f"{lead} {answer.response.intro}", MAX_INTRO)})
    return answer
