"""A wine asked for by name («Есть у вас Petrus 2010?», «Шато Латур есть?», «Киндзмараули»): a famous wine or
house the language layer knows, an appellation it knows that no grape or region name covers, or a Latin,
quoted or capitalised name that is no known word; and the filters its name tells, for the nearest wines when
the catalogue lacks it. A shop's own names (a producer no vocabulary knows) are the catalogue's to tell
(offline/catalogue_names.py)."""

from __future__ import annotations

import re
from typing import Any

from sommelier import language
from sommelier.language.filter_words import value_cues
from sommelier.offline.catalogue_names import WHOLE_REGION
from sommelier.offline.filters import read_filters
from sommelier.offline.intent import FILTER_KEYS, MAX_READ_CHARS, QueryIntent, Reading
from sommelier.offline.message import WORD
from sommelier.offline.message_kind import ASK_VERB, GREETING, MORE, OFF_TOPIC, THANKS, WINE_WORD

_TYPE_CUES = value_cues("wine_type")
_SWEETNESS_CUES = value_cues("sweetness")
_AVAILABILITY = language.cues("dialogue.json", "availability")
# A wine's name in a Russian message: a run of Latin words («Opus One», «Château Petrus»), or a quoted phrase.
_LATIN_NAME = re.compile(r"[A-Za-zÀ-ÿ][\w'’.\-]*(?:[ \t]+(?:&[ \t]+)?[A-Za-zÀ-ÿ][\w'’.\-]*)*")
_QUOTED = re.compile(r"[«\"“]([^»\"”]{2,60})[»\"”]")
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_VINTAGE_AFTER = re.compile(r"^[ \t,]*((?:19|20)\d\d)(?!\d)")
MIN_NAME_LETTERS = 4


def _is_vocabulary(phrase: str) -> bool:
    """Every word of the phrase is a grape, place, style, dish, glossary term or another word the layer knows
    («Pinot Noir», «Chianti», «brut»): not a wine's own name."""
    text = language.normalize(language.fold_accents(phrase))
    if language.glossary_topic_asked(text):
        return True
    known = [*language.grape_names_in(text), *language.dishes_in(text)]
    known += [m for m, _, _ in language.regions_in(text)]
    known += [m for m, _ in language.countries_in(text)]
    for cues in (_TYPE_CUES, _SWEETNESS_CUES, WINE_WORD, ASK_VERB, OFF_TOPIC, MORE, GREETING, THANKS):
        known += cues.find(text)
    text = language.blank_out(text, known)
    return not [w for w in WORD.findall(text) if len(w) >= 3 and not w.isdigit()]


def wine_named(text: str, t: str, reading: Reading) -> tuple[str, int | None, language.NamedWine | None] | None:
    """A wine the message asks for by name: a famous one the layer knows, or — in a question about
    availability or a request that states nothing else — a Latin or quoted name that is no known word."""
    source = (text or "")[:MAX_READ_CHARS]
    known = language.named_wines_in(source) or _appellations_named(source)
    capitalised = _capitalised_name(source, t, reading)
    if known:
        match, wine = known[0]
        start, end = _with_house_words(source, match.start_char, match.end_char)
    elif capitalised is not None:
        (start, end), wine = capitalised, None
    else:
        if not _CYRILLIC.search(source) or OFF_TOPIC.search(t):
            return None
        if reading.filters or reading.mood or not (_AVAILABILITY.search(t) or ASK_VERB.search(t)):
            return None
        spans = [(m.start(1), m.end(1)) for m in _QUOTED.finditer(source)]
        spans += [(m.start(), m.end()) for m in _LATIN_NAME.finditer(source)]
        found = next(((a, b) for a, b in spans if not _is_vocabulary(source[a:b])), None)
        if found is None:
            return None
        (start, end), wine = found, None
    name = source[start:end].strip(" .,!?:;")
    vintage = _VINTAGE_AFTER.match(source[end:])
    return (f"{name} {vintage.group(1)}" if vintage else name), (int(vintage.group(1)) if vintage else None), wine


def _appellations_named(source: str) -> list[tuple[language.Match, language.NamedWine]]:
    """The appellations a message names that are not read as a grape or a region («Киндзмараули», «Амароне»,
    not «просекко» or «Кьянти»), each as the wine its name tells of: the colour, sweetness, first grape,
    region and country the wine knowledge gives it."""
    text = language.fold_accents(source)
    taken = [(m.start_char, m.end_char) for m in language.grape_names_in(text)]
    taken += [(m.start_char, m.end_char) for m, _, _ in language.regions_in(text)]
    taken += [(m.start_char, m.end_char) for m, _ in language.countries_in(text)]
    found: list[tuple[language.Match, language.NamedWine]] = []
    for m, place in language.appellations_in(text):
        said = text[m.start_char : m.end_char]
        if any(s < m.end_char and m.start_char < e for s, e in taken) or not _whole(said, m.phrase):
            continue
        if place.level == WHOLE_REGION:
            continue  # «Россия», «Кахети»: a country's or a region's wine, no wine's name
        sweetness = _SWEETNESS_CUES.search(" ".join(place.style))
        region = language.region(place.region)
        colours = [c for c in place.colours if c != "sparkling"] if len(place.colours) > 1 else list(place.colours)
        wine = language.NamedWine(
            place.name,
            colours[0] if len(colours) == 1 else None,
            str(sweetness.value) if sweetness else None,
            place.grapes[0] if place.grapes else None,
            region.name if region else None,
            place.country,
        )
        found.append((m, wine))
    return found


def _whole(said: str, phrase: str) -> bool:
    """The words said are the name, not a short stem of it («ок» is not «Оками»): most of its letters."""
    return len(said) >= MIN_NAME_LETTERS and len(said) >= len(phrase) * 3 / 4


_HOUSE_WORDS = frozenset(language.normalize(w) for w in language.data("named_wines.json")["house_words"])
_WORD_BEFORE = re.compile(r"(\w+)[ \t]+$")


def _with_house_words(source: str, start: int, end: int) -> tuple[int, int]:
    """A known name with the house word before it: «Усадьба Дивноморское», «Шато Мухрани»."""
    before = _WORD_BEFORE.search(source[:start])
    if before and language.normalize(language.fold_accents(before.group(1))) in _HOUSE_WORDS:
        return before.start(1), end
    return start, end


# A run of capitalised words, Cyrillic or Latin, with the particles of wine names between them
# («Шабли Премье Крю Вайон», «Брунелло ди Монтальчино», «Château d'Yquem»).
_NAME_PARTICLES = language.alternation(language.data("dialogue.json")["name_particles"])
_CAPITALISED_RUN = re.compile(
    r"(?<![\w])[A-ZА-ЯЁÀ-Þ][\w'’.\-]*(?:[ \t]+(?:" + _NAME_PARTICLES + r"[ \t]+)?[A-ZА-ЯЁÀ-Þ][\w'’.\-]*)*"
)


def _capitalised_name(source: str, t: str, reading: Reading) -> tuple[int, int] | None:
    """In a question about availability («Есть Шабли Премье Крю Вайон?», «Шато Латур есть?»), the span of a
    capitalised name that is not just known words: its opening «Есть», «Хочу», «Подскажите» left out. A
    message that states more than the name itself («…Chianti Classico до 3000?») is a request."""
    if not _AVAILABILITY.search(t):
        return None
    for m in _CAPITALISED_RUN.finditer(source):
        start, end = m.start(), m.end()
        for word in re.finditer(r"\S+", m.group(0)):
            lead = language.normalize(word.group(0))
            if not (_AVAILABILITY.covers(lead) or ASK_VERB.covers(lead) or GREETING.covers(lead)):
                break
            start = m.start() + word.end()
        phrase = source[start:end].strip(" .,!?:;")
        if len(phrase) < 3 or _is_vocabulary(phrase):
            continue
        own = read_filters(phrase.lower(), language.correct_spelling(phrase.lower())).filters
        if set(reading.filters) - set(own) or reading.mood:
            return None
        at = source.index(phrase, start)
        return at, at + len(phrase)
    return None


def _known_wine_filters(wine: language.NamedWine | None) -> dict[str, Any]:
    """What a famous wine's name tells, as filters for the nearest wines: «Petrus» → dry red Merlot, Bordeaux."""
    if wine is None:
        return {}
    country = language.country_by_code(wine.country)
    found = {
        "wine_type": wine.wine_type,
        "sweetness": wine.sweetness,
        "grape_variety": wine.grape,
        "region": wine.region,
        "country": country.name if country else None,
    }
    return {k: v for k, v in found.items() if v}


_STYLE_KEYS = ("wine_type", "sweetness", "grape_variety")
_STILL_COLOURS = ("white", "rose")


def named_request(reading: Reading, name: str, vintage: int | None, known: language.NamedWine | None) -> QueryIntent:
    """A wine asked for by name: the filters its name tells, for the nearest wines when it is not in stock.
    What the customer said wins, and a style they state replaces the one the name tells («Cloudy Bay
    совиньон»: a Sauvignon Blanc, not the white the name alone would mean; «trapiche sauvignon blanc» is no
    red Malbec)."""
    told = _known_wine_filters(known)
    said = dict(reading.filters)
    if told.get("wine_type") == "sparkling" and said.get("wine_type") in _STILL_COLOURS:
        said.pop("wine_type")  # «моэт розовое»: a rosé of the house's sparkling wines, no still rosé
    if any(k in said for k in _STYLE_KEYS):
        told = {k: v for k, v in told.items() if k not in _STYLE_KEYS}
    return QueryIntent(
        kind="recommendation",
        filters={**told, **said},
        stated=tuple(k for k in FILTER_KEYS if k in said),
        wine_name=name,
        wine_vintage=vintage,
        known_wine=known,
    )
