"""One source of vocabulary: every consumer reads the language layer (sommelier.language), and no module
outside it keeps a table of Russian words of its own."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest
from sommelier import language

PACKAGE = Path(language.__file__).resolve().parents[1]

# Every consumer the issue names: the tools' SQL matching, the importer, the offline reader and writer,
# the local embeddings and the evaluation.
CONSUMERS = [
    "sommelier.tools.matching",
    "sommelier.tools.search",
    "sommelier.tools.arguments",
    "sommelier.catalog.normalise",
    "sommelier.catalog.importer",
    "sommelier.agent.offline.reader",
    "sommelier.agent.offline.writer",
    "sommelier.agent.offline.responder",
    "sommelier.embeddings.local",
    "sommelier.evaluation.metrics",
]

# Literal tables of Russian words that stay outside the layer, each for a reason: they are not a
# vocabulary of wines, places or food.
ALLOWED = {
    ("agent/context.py", "_MONTHS"): "calendar names for dates",
    ("agent/context.py", "_WEEKDAYS"): "calendar names for dates",
    ("agent/context.py", "_FIXED_HOLIDAYS"): "the holiday calendar",
    ("agent/guards.py", "_CYR_TO_LAT"): "homoglyphs for the injection guard",
    ("agent/offline/reader.py", "_THOUSAND_WORDS"): "numerals of the budget reader",
    ("agent/offline/reader.py", "_HUNDRED_WORDS"): "numerals of the budget reader",
    ("agent/offline/reader.py", "_MOOD_REWRITES"): "comparatives rewritten for the mood search",
    ("evaluation/metrics.py", "_FOOD_STOPWORDS"): "linking words of the evaluation's own dish check",
    ("agent/guards.py", "_LAT_TO_CYR"): "homoglyphs for the injection guard",
    ("agent/offline/glossary.py", "ENTRIES"): "the glossary's answers and the words that ask for them",
    ("agent/offline/writer.py", "_INFO_CLOSINGS"): "closing questions of informational answers",
    ("bot/dialog.py", "SEASON_QUERIES"): "the /start greeting's seasonal search phrases",
    ("agent/offline/writer.py", "OFFER_MARKERS"): "the writer's own offer sentences, read back from saved answers",
    # Known gap: the reader's regex grammar of style words (inflections, negations, slang such as
    # «сухач»); the enum spellings themselves live in wine_words.json.
    ("agent/offline/reader.py", "_SWEETNESS"): "regex grammar of style words (see above)",
}
_CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


@pytest.mark.parametrize("name", CONSUMERS)
def test_every_consumer_reads_the_language_layer(name):
    module = importlib.import_module(name)
    source = inspect.getsource(module)
    uses = [
        value
        for value in vars(module).values()
        if value is language or getattr(value, "__module__", "") == "sommelier.language"
    ]
    assert uses or "sommelier.language" in source, f"{name} does not read sommelier.language"


def _tables(path: Path):
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            value = node.value
            if not names or value is None:
                continue
            in_fstrings = {id(c) for j in ast.walk(value) if isinstance(j, ast.JoinedStr) for c in ast.walk(j)}
            strings = [
                n.value
                for n in ast.walk(value)
                if id(n) not in in_fstrings
                if isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and _CYRILLIC.search(n.value)
                and len(n.value) < 40
            ]
            if isinstance(value, (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Call)) and len(strings) >= 6:
                yield names[0], len(strings)


def test_no_vocabulary_table_lives_outside_the_layer():
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("language/"):
            continue
        for name, count in _tables(path):
            if (relative, name) not in ALLOWED:
                found[f"{relative}:{name}"] = count
    assert not found, f"word tables outside sommelier/language/data: {found}"


def test_the_data_files_are_the_only_word_lists_and_are_consistent():
    countries = language.data("countries.json")["countries"]
    codes = {c["code"] for c in countries}
    assert len(codes) == len(countries)
    assert {r["country"] for r in language.data("regions.json")["regions"]} <= codes
    dishes = language.data("dishes.json")
    assert sum(len(k.split("|")) for k in dishes["dishes"]) >= 150
    for names, categories in (*dishes["dishes"].items(), *dishes["groups"].items()):
        assert set(categories) <= set(dishes["categories"]), names
    assert language.food_categories("бургер") == {"говядина"}
    assert language.version() == language.version()  # stable digest of the files
