"""The intro wordings of language/data/intros.json: every one fills from what a request names, and a follow-up
keeps its «Тогда» in front of any of them."""

from __future__ import annotations

import string

from sommelier import language
from sommelier.offline import intros
from sommelier.offline.reader import QueryIntent

INTROS = language.data("intros.json")
RICH = QueryIntent(
    kind="recommendation",
    filters={
        "wine_type": "red",
        "sweetness": "dry",
        "grape_variety": "Пино Нуар",
        "country": "Франция",
        "food_pairing": "утка",
        "price_max": 3000,
    },
    mood="на романтический ужин",
)


def _templates() -> list[str]:
    many = [t for group in INTROS["many"].values() for t in group]
    relaxed = [t for group in INTROS["relaxed"].values() for t in group]
    return [*many, *INTROS["one"], *relaxed]


def test_every_wording_names_only_fields_the_writer_fills():
    fields = intros.intro_fields(RICH, 3, "сухое красное вино")
    relaxed_fields = {"food", "Food", "region", "grape", "country"}
    for template in _templates():
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        assert names <= set(fields) | relaxed_fields, template
        assert template.rstrip().endswith((".", "!", "?")), template


def test_each_group_the_request_names_is_filled_and_wording_reads_whole():
    fields = intros.intro_fields(RICH, 3, "сухое красное вино")
    for key in ("food", "occasion", "place", "grape", "price", "style"):
        assert fields[key], key
    for template in (t for group in INTROS["many"].values() for t in group):
        text = template.format(**fields)
        assert "{" not in text and "  " not in text, text


def test_a_follow_up_opens_with_then_whatever_the_wording():
    for query in ("а белое?", "а подешевле?", "а к рыбе?", "а из Италии?"):
        intro = intros.intro_for(
            QueryIntent(kind="recommendation", filters=dict(RICH.filters), follow_up=True), 3, query
        )
        assert intro.startswith("Тогда ") and (intro[6:7].islower() or intro[6:].startswith("Пино Нуар")), intro
