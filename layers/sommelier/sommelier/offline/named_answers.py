"""A wine asked for by name, answered honestly: the shop has it (the wines that bear its name), has something
close to it (say so, and what is close: its colour, grape, region), or has nothing like it. «Есть» is said
only of a wine that bears every word of the name asked for («Cloudy Bay» is not «Cloudy Ridge», though the
catalogue's name search, which reads the longer words only, finds both).

The reader finds the names it knows (offline/wine_names.py); the shop's own names are looked up here: the
words of a message no vocabulary explains (offline/catalogue_names.py) are asked of the catalogue's name
search, and a message whose words a wine bears is a question about that wine («trapiche sauvignon blanc»,
«паддл крик совиньон», «есть шумринка?»), whatever else the reader took it for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sommelier.domain.answer import SommelierResponse
from sommelier.domain.search import ToolRequest
from sommelier.domain.wine import Wine, wine_bears_name
from sommelier.language.sound import bears_name
from sommelier.offline import writer
from sommelier.offline.catalogue_names import as_written, candidate_names
from sommelier.offline.filters import read_filters
from sommelier.offline.intent import FILTER_KEYS, QueryIntent, describe_filters
from sommelier.offline.message import prepare
from sommelier.offline.message_kind import OFF_TOPIC
from sommelier.offline.selection import select

CANDIDATE_LIMIT = 10
_NAMED_IN_NAMES = ("grape_variety", "region")  # conditions a wine's own name may state
MAX_SHOWN_WORDS = 6  # a longer own name is a legal name («Вино сортовое выдержанное …»): the customer's words
MAX_WORDS_AFTER = 3
_CLAUSE = re.compile(r"[^,.;:!?()«»\"]*")
PREFETCH_NAMES = 2  # the name searches a prefetch adds: the longest candidate and its free words
Search = Callable[[dict[str, Any]], list[Wine]]  # search_wines with these arguments
Structured = Callable[[dict[str, Any], list[str]], list[Wine]]  # the filters, the wines to leave out

# A famous name is mostly a place (a Bordeaux château, a Champagne house, a Super Tuscan): its region is
# kept longer than its grape.
_LOOSENING: tuple[tuple[str, ...], ...] = (
    (),
    ("grape_variety",),
    ("region",),
    ("region", "grape_variety"),
    ("region", "grape_variety", "country"),
)


def _asks_another_subject(text: str) -> bool:
    """The message says it is about something else (the weather, code, football): its words are no wine's name."""
    return bool(OFF_TOPIC.search(prepare(text)[1]))


def bearing(name: str, wines: list[Wine]) -> list[Wine]:
    """The wines whose name, producer, places or grapes hold every word of the name."""
    return [w for w in wines if wine_bears_name(w, name)]


def name_searches(text: str, intent: QueryIntent) -> list[ToolRequest]:
    """The name searches the LLM's prefetch runs first, in the same invocation (agent/prefetch.py keeps the
    wines that bear the name): a wine the reader knows by name, else the message's free words."""
    if intent.wine_name:
        names = [intent.wine_name, *([intent.known_wine.name] if intent.known_wine else [])]
    elif intent.follow_up or intent.more or intent.kind not in ("recommendation", "off_topic"):
        return []
    elif _asks_another_subject(text):
        return []
    else:
        names = candidate_names(prepare(text)[1])[:PREFETCH_NAMES]
    return [ToolRequest("search_wines", {"name": n, "limit": CANDIDATE_LIMIT}) for n in dict.fromkeys(names)]


def by_name(search: Search, names: list[str], filters: dict[str, Any]) -> list[Wine]:
    """The wines the catalogue has under a name, in Latin or Cyrillic, misspelt or not (search_wines `name`:
    the database finds them), best match first, each bearing the whole name; the first of `names` that
    finds any."""
    for name in names:
        wines = bearing(name, search({**filters, "name": name, "limit": CANDIDATE_LIMIT}))
        if wines:
            return wines
    return []


def _naming(hits: list[Wine], stated: dict[str, Any]) -> list[Wine]:
    """The wines whose own name says what the customer stated with it, though their columns do not
    («мангуп мерло»: «Мангуп Мерло Каберне…» whose grapes the shop's file lists as Каберне only)."""
    named = [str(v) for k, v in stated.items() if k in _NAMED_IN_NAMES]
    if len(named) != len(stated):
        return []
    return [w for w in hits if all(bears_name(v, w.name) for v in named)]


def _with_words_after(text: str, name: str) -> list[str]:
    """The name with the words after it in its clause («Усадьба Дивноморское» + «Блан де Нуар»), when there
    are a few: a wine's full name, tried before the name alone."""
    at = text.find(name)
    if at < 0:
        return []
    tail = _CLAUSE.match(text[at + len(name) :])
    words = tail.group(0).split() if tail else []
    return [f"{name} {' '.join(words)}"] if 0 < len(words) <= MAX_WORDS_AFTER else []


def _holds(phrase: str, name: str) -> bool:
    """Whether a run of words holds the name and more («усадьба дивноморское блан де нуар»)."""
    words = prepare(name)[1].split()
    return len(phrase.split()) > len(words) and f" {' '.join(words)} " in f" {phrase} "


def shown_name(name: str, intent: QueryIntent, hits: list[Wine]) -> str:
    """The name as the answer says it: as the customer wrote it when they wrote a capital; else as the shop
    or the wine knowledge writes it («trapiche» → «Trapiche», «паддл крик» → «Paddle Creek Sauvignon Blanc»),
    and at least with a capital letter («мукузани» → «Мукузани»)."""
    if name != name.lower():
        return name
    for wine in hits[:1]:
        for own in (wine.producer, wine.name):
            if own and len(own.split()) <= MAX_SHOWN_WORDS and bears_name(name, own):
                return own
    known = intent.known_wine
    if known is not None and bears_name(name, known.name):
        return known.name
    return name[:1].upper() + name[1:]


def catalogue_named(text: str, intent: QueryIntent, look_up: Search) -> QueryIntent | None:
    """The message as a question about a wine of this catalogue when its free words are a name a wine bears
    («trapiche sauvignon blanc», «есть шумринка?»); None when they are no name of the shop's. `look_up` is
    the catalogue's search, not recorded: a look-up that finds nothing is no part of the answer."""
    if intent.wine_name or intent.follow_up or intent.more or intent.kind not in ("recommendation", "off_topic"):
        return None
    raw, t = prepare(text)
    if _asks_another_subject(text):
        return None
    for phrase in candidate_names(t):
        if bearing(phrase, look_up({"name": phrase, "limit": CANDIDATE_LIMIT})):
            reading = read_filters(raw, t)
            return QueryIntent(
                kind="recommendation",
                filters=dict(reading.filters),
                stated=tuple(k for k in FILTER_KEYS if k in reading.filters),
                wine_name=as_written(text, phrase),
            )
    return None


def named(
    text: str, intent: QueryIntent, exclude: list[str], search: Search, structured: Structured
) -> tuple[SommelierResponse, QueryIntent]:
    """«Есть у вас Petrus 2010?»: the wine itself when the catalogue has it; else say it is not there and
    offer the nearest wines by what its name tells (the reader's filters: type, sweetness, grape, region,
    country), loosening grape, then region, then country, never what the customer stated; a name that
    tells nothing gets a question back. Returns the answer and the request it answered."""
    name = str(intent.wine_name)
    names = _names_to_search(text, name, intent)
    hits = [] if intent.more else by_name(search, names, {})
    stated = describe_filters({k: intent.filters[k] for k in intent.stated if k in intent.filters})
    unmet = None
    if hits and stated:  # «Есть Sassicaia до 5000?»: the SQL says whether it also meets the rest
        fitting = by_name(search, names, stated) or _naming(hits, stated)
        unmet = None if fitting else replace(intent, filters=stated)
        hits = fitting or hits
    if hits:
        said = replace(intent, wine_name=shown_name(name, intent, hits))
        # A wine that bears the name but not the conditions was found by its name alone.
        answered = intent if unmet is None else replace(intent, filters={})
        return writer.named_found(said, hits, query=text, unmet=unmet), answered
    return _nearest(text, shown_name(name, intent, []), intent, exclude, structured)


def _names_to_search(text: str, name: str, intent: QueryIntent) -> list[str]:
    """The longest words around the name first («Усадьба Дивноморское Блан де Нуар»), then the name; a famous
    wine by its own name too («Сассикайю» → Sassicaia, as a shop writes it)."""
    longer = [as_written(text, c) for c in candidate_names(prepare(text)[1]) if _holds(c, name)][:1]
    longer += _with_words_after(text, name)
    return list(dict.fromkeys([*longer, name, *([intent.known_wine.name] if intent.known_wine else [])]))


def _nearest(
    text: str, name: str, intent: QueryIntent, exclude: list[str], structured: Structured
) -> tuple[SommelierResponse, QueryIntent]:
    """The named wine is not in the catalogue: the nearest wines by what its name tells, loosened step by
    step, never what the customer stated; a name that tells nothing, or nothing near, gets a question back."""
    wanted = describe_filters(intent.filters)  # what the name tells (reader), and what the customer said
    if wanted:
        for loosen in _LOOSENING:
            filters = {k: v for k, v in wanted.items() if k not in loosen or k in intent.stated}
            wines = structured(filters, exclude)
            if wines:
                near = replace(intent, filters=filters)
                picks = select(wines, diversify=False)
                if intent.more:  # «ещё»: the name was answered already
                    return writer.recommendation(near, picks, query=text), near
                return writer.named_absent(near, picks, query=text, name=name), near
    return writer.named_unknown(name, query=text), intent
