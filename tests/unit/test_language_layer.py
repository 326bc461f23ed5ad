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
from sommelier.language.vocabulary import DATA_FILES

PACKAGE = Path(language.__file__).resolve().parents[1]

# Every consumer the issue names: the tools' SQL matching, the importer, the offline reader and writer,
# the local embeddings and the evaluation.
CONSUMERS = [
    "sommelier.language.matching",
    "sommelier.toolfn.search",
    "sommelier.domain.search",
    "sommelier.catalog.importer",
    # the offline reader, rule by rule (sommelier/offline/reader.py names them)
    *(
        f"sommelier.offline.{name}"
        for name in (
            "intent",
            "message",
            "negations",
            "style_and_grape",
            "places",
            "food",
            "budget",
            "exclusions",
            "mood_request",
            "message_kind",
            "filters",
            "wine_names",
            "follow_ups",
        )
    ),
    # the offline writer, part by part (sommelier/offline/writer.py names them)
    "sommelier.offline.request_words",
    "sommelier.offline.wine_cards",
    "sommelier.offline.intros",
    "sommelier.offline.glossary_answers",
    "sommelier.offline.mood",
    "sommelier.offline.responder",
    "sommelier.embeddings.local",
    "sommelier_dev.evaluation.filters",  # the evaluation: its filter and constraint checks
    "sommelier_dev.evaluation.constraints",
]

# Literals of Russian words that stay outside the layer, each for a reason: they are not a vocabulary of
# wines, places, food, prices or the customer's requests. Keyed by (module, the assignment or function
# that holds them, or "*" for the whole module); the tests below fail on anything else.
ALLOWED = {
    ("agent/context.py", "_MONTHS"): "calendar names for dates",
    ("agent/context.py", "_WEEKDAYS"): "calendar names for dates",
    ("agent/context.py", "_FIXED_HOLIDAYS"): "the holiday calendar",
    (
        "telegram/dialog.py",
        "SEASON_QUERIES",
    ): "the four seasons (calendar) and the /start greeting's own search sentences",
    ("offline/closings.py", "OFFER_MARKERS"): "the writer's own offer sentences, read back from its saved answers",
    ("shop/report.py", "report_chart"): "the titles of the shop report's charts",
    # The guards, whole modules: homoglyph tables and phrases of attacks on the bot (role play, secrets,
    # free orders), a security rule set with its own tests (tests/hardening), not wine or request words.
    ("agent/guards.py", "*"): "the injection guards' homoglyphs and the attack phrases they look for, in and out",
    (
        "agent/output_guard.py",
        "*",
    ): "the output guard's attack phrases: an adopted persona, a quoted prompt (split from guards.py)",
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


# ---------------------------------------------------------------- the detector
#
# Three ways vocabulary hides in code, all found from the source (ast), never from a list of names:
# - a table: an assignment holding ≥ 6 Russian words or short phrases (prose sentences don't count);
# - a regular expression with Cyrillic alternatives («красн|бел|розов», an ending table «ое|ого|ому»);
# - a word the data files hold, written as a literal that code reads with: a pattern, a member of a
#   set/list/tuple, a dict key, a string compared with `in`/`==`. Words that say nothing (stopwords,
#   particles) and answer prose (four words or more, or punctuation) are not vocabulary.

_WORD_LIKE = re.compile(r"[а-яёa-z]+(?:[ -][а-яёa-z]+){0,2}", re.IGNORECASE)
_RUSSIAN_WORD = re.compile(r"[а-яё]{3,}", re.IGNORECASE)
_MIN_STEM = 4  # «без», «год», «день»: grammar and calendar words the data also holds are not vocabulary
_REGEX_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split"}
_STRING_TESTS = {"startswith", "endswith", "removeprefix", "removesuffix", "find", "index", "count"}
_MIN_TABLE = 6
_MIN_ALTERNATIVES = 3


def _is_word_like(text: str) -> bool:
    return bool(_CYRILLIC.search(text)) and bool(_WORD_LIKE.fullmatch(text.strip()))


def _data_vocabulary() -> dict[str, str]:
    """Stem → a word, for every Russian word the data files hold (patterns and answer phrases aside)."""
    not_words = {"_about", "pattern", "phrase", "adjective", "informational", "tell_about", "previous_request"}
    silent = {
        language.stem(language.normalize(w))
        for w in (
            *language.data("occasions.json")["stopwords"],
            *language.data("dialogue.json")["particles"],
            *language.data("dialogue.json")["request_words"],
        )
    }
    vocabulary: dict[str, str] = {}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key not in not_words:
                    walk(key)
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, str):
            for word in _RUSSIAN_WORD.findall(language.normalize(node)):
                if language.stem(word) not in silent and len(language.stem(word)) >= _MIN_STEM:
                    vocabulary.setdefault(language.stem(word), word)

    for name in DATA_FILES:
        walk(language.data(name))
    return vocabulary


def _owners(tree: ast.Module):
    """(name of the top-level assignment, function or class, node) for each top-level statement."""
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            yield (names[0] if names else "?"), node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node


def _docstrings(tree: ast.Module) -> set[int]:
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def _strings(node) -> list[ast.Constant]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


_REGEX_SYNTAX = re.compile(r"\||\\[wsbd]|\(\?")


def _looks_like_regex(text: str) -> bool:
    return "\n" not in text and bool(_REGEX_SYNTAX.search(text))


def _called_name(node) -> str:
    if not isinstance(node, ast.Call):
        return ""
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def _read_literals(node):
    """(kind, string constant) for the literals code reads text with, inside `node`: arguments of the
    `re` functions, and any string written in regex syntax (a piece glued into a pattern elsewhere)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str) and _looks_like_regex(child.value):
            yield "pattern", child
        called = _called_name(child)
        if (called in _REGEX_FUNCTIONS or called == "_rx") and child.args:
            for constant in _strings(child.args[0]):
                yield "pattern", constant
        elif isinstance(child, (ast.Set, ast.List, ast.Tuple)):
            for item in child.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    yield "member", item
        elif isinstance(child, ast.Dict):
            for key in child.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield "key", key
        elif isinstance(child, ast.Compare):
            for constant in _strings(child):
                yield "compared", constant
        elif called in _STRING_TESTS:
            for constant in (a for a in child.args if isinstance(a, ast.Constant) and isinstance(a.value, str)):
                yield "compared", constant


def vocabulary_findings(source: str, vocabulary: dict[str, str]) -> list[tuple[str, str, str]]:
    """(owner, what, detail) for each place where `source` keeps vocabulary of its own."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found: list[tuple[str, str, str]] = []
    for owner, node in _owners(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
            node.value, (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Call)
        ):
            in_fstrings = {id(c) for j in ast.walk(node.value) if isinstance(j, ast.JoinedStr) for c in ast.walk(j)}
            words = [c for c in _strings(node.value) if id(c) not in in_fstrings and _is_word_like(c.value)]
            if len(words) >= _MIN_TABLE:
                found.append((owner, "table", f"{len(words)} words"))
        for kind, constant in _read_literals(node):
            text = constant.value
            if id(constant) in docstrings or not _CYRILLIC.search(text):
                continue
            if kind == "pattern":
                alternatives = [a for a in re.split(r"[|()]", text) if _CYRILLIC.search(a)]
                if len(alternatives) >= _MIN_ALTERNATIVES:
                    found.append((owner, "alternatives", text[:60]))
            elif not _is_word_like(text):
                continue  # answer prose, not a word to read
            for word in _RUSSIAN_WORD.findall(language.normalize(text)):
                if language.stem(word) in vocabulary:
                    found.append((owner, f"data word in a {kind}", word))
    return found


@pytest.fixture(scope="module")
def vocabulary():
    return _data_vocabulary()


@pytest.mark.gate
def test_no_vocabulary_lives_outside_the_layer(vocabulary):
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("language/"):
            continue
        for owner, what, detail in vocabulary_findings(path.read_text("utf-8"), vocabulary):
            if (relative, owner) not in ALLOWED and (relative, "*") not in ALLOWED:
                found.setdefault(f"{relative}:{owner}", []).append(f"{what}: {detail}")
    assert not found, f"vocabulary outside sommelier/language/data: {found}"


@pytest.mark.gate
def test_every_allowed_exception_still_exists(vocabulary):
    """An exception that no longer matches anything is removed, so the list stays honest."""
    used = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        found = vocabulary_findings(path.read_text("utf-8"), vocabulary)
        used |= {(relative, owner) for owner, _, _ in found} | ({(relative, "*")} if found else set())
    assert set(ALLOWED) <= used, sorted(set(ALLOWED) - used)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a word table, as the reader's numerals were
        ('_N = {"две": 2, "три": 3, "пять": 5, "шесть": 6, "семь": 7, "десять": 10}\n', ("_N", "table")),
        # Cyrillic alternatives in a pattern, as the reader's style regexes were
        ('import re\n_T = re.compile(r"красн\\w*|бел\\w*|розов\\w*")\n', ("_T", "alternatives")),
        # an adjective-ending table glued into a pattern
        ('import re\n_ADJ = r"(?:ое|ого|ому|ым)"\n_R = re.compile(r"сух" + _ADJ)\n', ("_ADJ", "alternatives")),
        # one data word in a pattern: «игрист» is wine_words.json's
        ('import re\n_S = re.compile(r"игрист\\w*")\n', ("_S", "data word in a pattern")),
        # a data word as a set member or compared inside a function
        ('_CHEAP = {"бюджетное"}\n', ("_CHEAP", "data word in a member")),
        ('def f(w):\n    return w == "недорогое"\n', ("f", "data word in a compared")),
        ('def g(style):\n    return style.startswith("игристое")\n', ("g", "data word in a compared")),
        ('_MOOD = {"полегче": "легкое"}\n', ("_MOOD", "data word in a key")),
    ],
)
def test_the_detector_finds_duplicated_vocabulary(source, expected, vocabulary):
    assert expected in [(owner, what) for owner, what, _ in vocabulary_findings(source, vocabulary)]


def test_the_detector_leaves_prose_and_other_words_alone(vocabulary):
    source = (
        '"""Модуль: красное и белое."""\n'
        '_INTRO = ["Вот красное сухое вино к ужину.", "Подобрала игристое на праздник!"]\n'
        'import re\n_DATE = re.compile(r"\\d+\\.\\d+")\n'
        '_UNITS = {"кнопка": 1}\n'
    )
    assert vocabulary_findings(source, vocabulary) == []


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


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("рислинк полусладкий", "рислинг"), ("савиньон блан", "совиньон блан"), ("каберне савиньон", "каберне совиньон")],
)
def test_a_grape_misspelt_by_ear_is_put_right_in_place(typed, meant):
    corrected = language.correct_spelling(typed)
    assert len(corrected) == len(typed) and meant in corrected
    assert language.grape(meant) is not None


@pytest.mark.parametrize("word", ["совет", "кармен", "праздник", "мускатное", "сухое белое к рыбе"])
def test_ordinary_words_are_not_turned_into_grapes(word):
    assert language.correct_spelling(word) == word


@pytest.mark.parametrize(
    ("shop_wording", "asked", "meets"),
    [
        ("Сыры с плесенью", "к рокфору", True),
        ("Десерты", "к сыру с плесенью", False),  # a blue cheese is a cheese, not a dessert
        ("Твёрдые сыры", "к горгонзоле", False),
        ("Закуски", "к оливье", True),  # a shop's «Закуски» are the cold starters, salads among them
        ("Салаты", "к фуа-гра", False),
        ("Красное мясо", "к оленине", False),  # shops list «Дичь» apart from «Красное мясо»
        ("Дичь", "к оленине", True),
        ("Красное мясо", "к рибаю", True),
        ("Овощные блюда", "к рататую", True),
    ],
)
def test_shop_pairing_categories_meet_the_dishes_they_cover(shop_wording, asked, meets):
    overlap = language.food_categories(shop_wording) & language.food_categories(asked)
    assert bool(overlap) is meets, (language.food_categories(shop_wording), language.food_categories(asked))


def test_cues_match_stems_and_exact_forms():
    greeting = language.cues("dialogue.json", "greeting")
    assert [m.phrase for m in greeting.find("Привет, друг!")] == ["привет", "друг"]
    assert not greeting.find("покажи другие")  # «друг» is a form, not a stem: «другие» is not a greeting
    yes = language.cues("dialogue.json", "affirmative")
    assert yes.covers("Да, покажи!") and yes.covers("давайте посмотрим")
    assert not yes.covers("да, но белое") and not yes.covers("  ?")
    styles = language.style_cues("wine_types")
    assert {m.value for m in styles.find("красного и розе")} == {"red", "rose"}
    assert not styles.find("аромат розы")  # «розе» is an exact form: «розы» is a flower


def test_the_version_covers_every_data_file():
    shipped = {path.name for path in (PACKAGE / "language" / "data").glob("*.json")}
    assert set(DATA_FILES) == shipped
    for name in shipped:
        assert language.data(name)["_about"], f"{name} says what it holds"


def test_the_layer_reads_its_gzipped_tables_as_the_repository_reads_its_json(tmp_path):
    """The layer build gzips language/data (layers/sommelier/pack_data.py): a copy packed that way gives the
    same tables and the same version digest, in a fresh interpreter that sees only the packed copy."""
    import json
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "sommelier"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    packed = subprocess.run(
        [sys.executable, str(PACKAGE.parents[0] / "pack_data.py"), str(copy)], capture_output=True, text=True
    )
    assert packed.returncode == 0, packed.stderr
    data = copy / "language" / "data"
    assert not list(data.glob("*.json")) and len(list(data.glob("*.json.gz"))) == len(DATA_FILES)
    probe = "import json, sys; from sommelier import language; import sommelier; "
    probe += "print(json.dumps([sommelier.__file__, language.version(), language.data('grapes.json')]))"
    run = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); {probe}"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    where, version, grapes = json.loads(run.stdout)
    assert Path(where).resolve().parent == copy.resolve()
    assert version == language.version()
    assert grapes == json.loads((PACKAGE / "language" / "data" / "grapes.json").read_text("utf-8"))


def test_packing_refuses_a_folder_without_tables(tmp_path):
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, str(PACKAGE.parents[0] / "pack_data.py"), str(tmp_path)], capture_output=True, text=True
    )
    assert run.returncode != 0 and "no language/data/*.json" in run.stderr


def _dish_nouns() -> list[str]:
    spec = language.data("dishes.json")
    names = {n for section in ("dishes", "groups") for entry in spec[section] for n in entry.split("|")}
    return sorted(n for n in names if re.fullmatch(r"[а-яё]{3,}", n))


def test_every_case_of_a_dish_noun_is_read_in_a_request():
    """«к гусю», «к лососю», «к ягнёнку»: the stemmer splits these words' cases, the lemma joins them."""
    import pymorphy3

    morph = pymorphy3.MorphAnalyzer()
    missed = []
    for name in _dish_nouns():
        parse = next((p for p in morph.parse(name) if {"NOUN", "nomn"} in p.tag and p.is_known), None)
        if parse is None:
            continue  # a word pymorphy3 does not know (мимолет) or not a noun
        for case in ("datv", "gent", "ablt", "loct", "accs"):
            form = parse.inflect({case})
            if form is None or morph.parse(form.word)[0].normal_form != parse.normal_form:
                continue  # pymorphy3 itself does not map the form back (a word it does not know)
            if not language.food_categories(f"к {form.word}", fuzzy=True):
                missed.append(form.word)
    assert not missed, missed


@pytest.mark.parametrize("dish", ["к пельменям", "к борщу", "к холодцу", "к голубцам", "к селёдке под шубой", "к гусю"])
def test_everyday_russian_dishes_are_food(dish):
    assert language.food_categories(dish, fuzzy=True)


@pytest.mark.parametrize(
    ("sentence", "about_colour"),
    [
        ("Рубиновый цвет.", True),
        ("Рубиновое, с гранатовым ободком.", True),  # a shop that never writes the word «цвет»
        ("Соломенно-жёлтое, с зеленоватыми бликами.", True),
        ("Тёмно-пурпурное с малиновым отливом.", True),
        ("Почти чёрное, непрозрачное.", True),
        ("Насыщенный, полнотелый вкус с нотами вишни.", False),
        ("Аромат вишни и фиалки.", False),
        ("Красное сухое вино.", False),
        ("Яркий и свежий.", False),
    ],
)
def test_a_colour_sentence_is_told_with_or_without_the_word_colour(sentence, about_colour):
    assert language.is_colour_sentence(sentence) is about_colour
    assert language.brief(f"{sentence} Вкус сочный.", 600, skip_colour=True).startswith("Вкус") is about_colour


def test_stems_are_right_when_threads_stem_at_once():
    """A Snowball stemmer keeps its word in the instance: turns stemming concurrently must not share one."""
    import random
    import threading

    import snowballstemmer

    bases = ["красн", "сух", "белоснежн", "полусладк", "игрист", "выдержанн", "тосканск", "говяжь", "азиатск"]
    endings = ["ами", "ого", "ему", "ыми", "ая", "ое", "ий", "ов", "ей", "ям", "иями", "ейшего"]
    # Words no test has stemmed before (the cache would answer them without the stemmer).
    fresh = [f"{base}{ending}{tail}" for base in bases for ending in endings for tail in ("", "ов", "ями")]
    oracle = snowballstemmer.stemmer("russian")
    expected = {word: oracle.stemWord(word) for word in fresh}
    problems: list[tuple[str, str]] = []

    def stem_all(order: list[str]) -> None:
        for word in order:
            try:
                if language.stem(word) != expected[word]:
                    problems.append((word, "wrong stem"))
            except Exception as exc:  # noqa: BLE001 - any failure is the finding
                problems.append((word, repr(exc)))

    rng = random.Random(23)
    threads = [threading.Thread(target=stem_all, args=(rng.sample(fresh, len(fresh)),)) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []
