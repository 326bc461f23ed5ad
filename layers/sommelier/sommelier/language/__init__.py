"""The one Russian language layer: the vocabulary (countries, regions, grapes, dishes, occasions and moods,
wine-style words, how a price is said, the cues of a message's kind) lives in `language/data/*.json`; this
package reads it and matches text against it. Every consumer (the tools' SQL matching, the importer, the
offline reader and writer, the local embeddings, the evaluation's normalisation) asks this package; none
keeps a table of its own.

Matching works on word stems (snowballstemmer's Russian stemmer) at word boundaries, never on substrings,
so «паста» does not match inside «антипасто». Misspellings («крассное», «мальбэк») are caught by
rapidfuzz when it is installed (it is not in the Lambda layer: the tool function matches exact stems).

Each job is a module of its own (below); this module names what they offer and loads each on first use,
so a handler pays at its cold start only for the parts it calls (the webhook and the tool function need
neither the appellations nor the glossary).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Every name the layer offers → the module of its job (sommelier.language.<module>).
_HOMES: dict[str, str] = {
    # normalisation and stems
    "LINKING": "text",
    "alternation": "text",
    "fold": "text",
    "fold_accents": "text",
    "normalize": "text",
    "stem": "text",
    "words": "text",
    # the data files
    "data": "vocabulary",
    "version": "vocabulary",
    # matching phrases on stems
    "FUZZY_MIN_LENGTH": "phrases",
    "FUZZY_MIN_SCORE": "phrases",
    "Cues": "phrases",
    "Match": "phrases",
    "PhraseIndex": "phrases",
    "blank_out": "phrases",
    "cues": "phrases",
    # pymorphy3: inflection
    "inflect": "morphology",
    # a wine's type and sweetness
    "enum_words": "style_words",
    "style_cues": "style_words",
    "style_in_words": "style_words",
    # misspellings put right
    "correct_spelling": "spelling",
    # countries and regions
    "Country": "places",
    "Region": "places",
    "countries": "places",
    "countries_in": "places",
    "country": "places",
    "country_by_code": "places",
    "region": "places",
    "region_spellings": "places",
    "regions": "places",
    "regions_in": "places",
    # grapes
    "Grape": "grape_names",
    "blend_word": "grape_names",
    "grape": "grape_names",
    "grape_aliases": "grape_names",
    "grape_genitive": "grape_names",
    "grape_key": "grape_names",
    "grape_keys_for_query": "grape_names",
    "grape_names_in": "grape_names",
    "grapes": "grape_names",
    "grapes_in": "grape_names",
    "parse_grape": "grape_names",
    # dishes and food categories
    "dishes_in": "food",
    "food_categories": "food",
    # occasions and moods
    "mood_cue_pattern": "occasions_and_moods",
    "moods": "occasions_and_moods",
    "occasions": "occasions_and_moods",
    # a description's sentences, its brief
    "brief": "descriptions",
    "is_colour_sentence": "descriptions",
    "is_cut": "descriptions",
    "written_sentences": "descriptions",
    "sentences": "descriptions",
    # a shop's catalogue columns and cells
    "catalog_column": "catalog_columns",
    "expand_shorthand": "catalog_columns",
    "harvest_year_pattern": "catalog_columns",
    "stock_word": "catalog_columns",
    "without_currency": "catalog_columns",
    # wine terms explained
    "GlossaryTopic": "glossary",
    "glossary_topic": "glossary",
    "glossary_topic_asked": "glossary",
    "glossary_topics": "glossary",
    # wines known by name
    "NamedWine": "named_wines",
    "named_wines_in": "named_wines",
    # appellations and Russian legal names (language/knowledge.py)
    "Appellation": "knowledge",
    "LegalReading": "knowledge",
    "appellation": "knowledge",
    "appellations": "knowledge",
    "appellations_in": "knowledge",
    "legal_reading": "knowledge",
    "non_wine": "knowledge",
    "wine_apart": "knowledge",
}

__all__ = sorted(_HOMES)

if TYPE_CHECKING:  # the same names for the type checker, by job as above
    # isort: off
    from sommelier.language.text import (
        LINKING as LINKING,
        alternation as alternation,
        fold as fold,
        fold_accents as fold_accents,
        normalize as normalize,
        stem as stem,
        words as words,
    )
    from sommelier.language.vocabulary import data as data, version as version
    from sommelier.language.phrases import (
        FUZZY_MIN_LENGTH as FUZZY_MIN_LENGTH,
        FUZZY_MIN_SCORE as FUZZY_MIN_SCORE,
        Cues as Cues,
        Match as Match,
        PhraseIndex as PhraseIndex,
        blank_out as blank_out,
        cues as cues,
    )
    from sommelier.language.morphology import inflect as inflect
    from sommelier.language.style_words import (
        enum_words as enum_words,
        style_cues as style_cues,
        style_in_words as style_in_words,
    )
    from sommelier.language.spelling import correct_spelling as correct_spelling
    from sommelier.language.places import (
        Country as Country,
        Region as Region,
        countries as countries,
        countries_in as countries_in,
        country as country,
        country_by_code as country_by_code,
        region as region,
        region_spellings as region_spellings,
        regions as regions,
        regions_in as regions_in,
    )
    from sommelier.language.grape_names import (
        Grape as Grape,
        blend_word as blend_word,
        grape as grape,
        grape_aliases as grape_aliases,
        grape_genitive as grape_genitive,
        grape_key as grape_key,
        grape_keys_for_query as grape_keys_for_query,
        grape_names_in as grape_names_in,
        grapes as grapes,
        grapes_in as grapes_in,
        parse_grape as parse_grape,
    )
    from sommelier.language.food import dishes_in as dishes_in, food_categories as food_categories
    from sommelier.language.occasions_and_moods import (
        mood_cue_pattern as mood_cue_pattern,
        moods as moods,
        occasions as occasions,
    )
    from sommelier.language.descriptions import (
        brief as brief,
        is_colour_sentence as is_colour_sentence,
        is_cut as is_cut,
        written_sentences as written_sentences,
        sentences as sentences,
    )
    from sommelier.language.catalog_columns import (
        catalog_column as catalog_column,
        expand_shorthand as expand_shorthand,
        harvest_year_pattern as harvest_year_pattern,
        stock_word as stock_word,
        without_currency as without_currency,
    )
    from sommelier.language.glossary import (
        GlossaryTopic as GlossaryTopic,
        glossary_topic as glossary_topic,
        glossary_topic_asked as glossary_topic_asked,
        glossary_topics as glossary_topics,
    )
    from sommelier.language.named_wines import NamedWine as NamedWine, named_wines_in as named_wines_in
    from sommelier.language.knowledge import (
        Appellation as Appellation,
        LegalReading as LegalReading,
        appellation as appellation,
        appellations as appellations,
        appellations_in as appellations_in,
        legal_reading as legal_reading,
        non_wine as non_wine,
        wine_apart as wine_apart,
    )
    # isort: on


def __getattr__(name: str) -> Any:
    """A name of the layer, from its module, imported on first use and kept here for the next."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
