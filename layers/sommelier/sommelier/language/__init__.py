"""The one Russian language layer: the vocabulary (countries, regions, grapes, dishes, occasions and moods,
wine-style words, how a price is said, the cues of a message's kind) lives in `language/data/*.json`; this package reads it and matches text against it. Every consumer (the tools'
SQL matching, the importer, the offline reader and writer, the local embeddings, the evaluation's
normalisation) asks this package; none keeps a table of its own.

Matching works on word stems (snowballstemmer's Russian stemmer) at word boundaries, never on substrings,
so «паста» does not match inside «антипасто». Misspellings («крассное», «мальбэк») are caught by
rapidfuzz when it is installed (it is not in the Lambda layer: the tool function matches exact stems).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
import zlib
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, NamedTuple

_WORD = re.compile(r"[a-zа-я0-9]+")
_SPACES = re.compile(r"\s+")
_DATA_FILES = (
    "countries.json",
    "regions.json",
    "grapes.json",
    "dishes.json",
    "occasions.json",
    "wine_words.json",
    "dialogue.json",
    "budget.json",
    "glossary.json",
    "structure.json",
    "catalog_columns.json",
    "shop_shorthand.json",
    "named_wines.json",
    "mood_reasons.json",
    "appellations.json",
    "legal_words.json",
    "dish_styles.json",
    "intros.json",
)
# Words that never carry meaning in a dish or place phrase.
_LINKING = frozenset({"к", "с", "со", "из", "на", "под", "для", "и", "в", "во", "или", "по"})
LINKING = _LINKING
FUZZY_MIN_SCORE = 84
FUZZY_MIN_LENGTH = 5


def _latin_fold_table() -> dict[int, str]:
    """Accented Latin letters → their base letter, one for one («Médoc» → «medoc», «Grüner» → «gruner»), so
    offsets into a text stay put; Cyrillic is left alone («й» must not become «и»)."""
    table: dict[int, str] = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[:1]
        if base.isascii() and base.isalpha() and base != chr(code):
            table[code] = base
    return table


_LATIN_FOLD = _latin_fold_table()


def fold_accents(text: str) -> str:
    """«Pérignon» → «Perignon», «Moët» → «Moet»: Latin letters lose their accents, one character for one (so
    offsets hold); Cyrillic («й», «ё») is left alone."""
    return text.translate(_LATIN_FOLD)


def fold(text: str) -> str:
    """Lower case, ё→е and accents off Latin letters, keeping every character where it was."""
    return fold_accents(text.lower().replace("ё", "е"))


def normalize(text: str) -> str:
    """Lower case, ё→е, accents off Latin letters, hyphens and underscores as spaces, single spaces."""
    lowered = fold(text).replace("-", " ").replace("_", " ")
    return _SPACES.sub(" ", lowered).strip()


def words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


_per_thread = threading.local()


def _stemmer():
    """This thread's stemmer: a Snowball stemmer keeps the word it works on in the instance, so threads
    sharing one corrupt each other's stems (turns run concurrently under `serve` and in the agent)."""
    stemmer = getattr(_per_thread, "stemmer", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _per_thread.stemmer = snowballstemmer.stemmer("russian")
    return stemmer


@cache
def stem(word: str) -> str:
    """The Snowball (Porter) Russian stem of one normalised word; other scripts are returned as they are."""
    return _stemmer().stemWord(word) if word else word


def stems(text: str) -> list[str]:
    return [stem(w) for w in words(text)]


def data(name: str) -> Any:
    """One vocabulary file, parsed (cached). The only reader of language/data."""
    return _load(name)


@cache
def _load(name: str) -> Any:
    return json.loads(_data_bytes(name).decode("utf-8"))


def _data_bytes(name: str) -> bytes:
    """A vocabulary file's bytes: the repository keeps it as JSON, the Lambda layer gzipped beside the code
    (layers/sommelier/pack_data.py), which ships the tables in a fifth of the space."""
    folder = resources.files("sommelier.language") / "data"
    plain = folder / name
    if plain.is_file():
        return plain.read_bytes()
    # zlib reads the gzip format itself (wbits 16 + MAX_WBITS), without importing the gzip module
    return zlib.decompress((folder / f"{name}.gz").read_bytes(), wbits=16 + zlib.MAX_WBITS)


@cache
def version() -> str:
    """A digest of the vocabulary: rows normalised with another version are normalised again."""
    digest = hashlib.sha256()
    for name in _DATA_FILES:
        digest.update(_data_bytes(name))
    return digest.hexdigest()[:12]


# ---------------------------------------------------------------- phrase matching on stems


class Match(NamedTuple):
    start: int  # word index in the text
    end: int
    value: Any
    phrase: str  # the vocabulary phrase that matched
    start_char: int = 0  # where the words are in the text as given
    end_char: int = 0


class PhraseIndex:
    """Phrases (any number of words) → values; finds the longest non-overlapping phrases in a text.
    Words match on their stems, or as written with `exact` (for words whose stem is another word's)."""

    def __init__(self, entries: dict[str, Any], *, exact: bool = False):
        self._key = _as_written if exact else stem
        self._by_stems: dict[tuple[str, ...], list[tuple[str, Any]]] = {}
        self._longest = 1
        for phrase, value in entries.items():
            key = tuple(self._key(w) for w in words(phrase) if w not in _LINKING) or tuple(
                self._key(w) for w in words(phrase)
            )
            if not key:
                continue
            self._by_stems.setdefault(key, []).append((phrase, value))
            self._longest = max(self._longest, len(key))
        self._single_words = sorted({normalize(p) for p in entries if len(words(p)) == 1 and len(p) >= 4})

    def find(self, text: str, *, fuzzy: bool = False) -> list[Match]:
        if not self._by_stems:
            return []
        tokens, offsets, keep = _tokens(text)
        content = [self._key(tokens[i]) for i in keep]
        found: list[Match] = []
        i = 0
        while i < len(content):
            for size in range(min(self._longest, len(content) - i), 0, -1):
                hit = self._by_stems.get(tuple(content[i : i + size]))
                if hit:
                    first, last = keep[i], keep[i + size - 1]
                    for phrase, value in hit:
                        found.append(Match(first, last + 1, value, phrase, offsets[first][0], offsets[last][1]))
                    i += size
                    break
            else:
                if fuzzy:
                    guess = self._lemma(tokens[keep[i]]) or self._fuzzy(tokens[keep[i]])
                    if guess is not None:
                        at = keep[i]
                        for phrase, value in self._by_stems[(self._key(guess),)]:
                            found.append(Match(at, at + 1, value, phrase, offsets[at][0], offsets[at][1]))
                i += 1
        return found

    def _lemma(self, word: str) -> str | None:
        """The dictionary form of a word whose cases the stemmer splits («гусь» → «гу», «гусю» → «гус»;
        «лосось»/«лососю», «ягнёнок»/«ягнёнку»), when that form is in the index. pymorphy3 is loaded here,
        for requests only (fuzzy), and only for a word nothing else matched."""
        if self._key is not stem or len(word) < 3 or not word.isalpha():
            return None
        for lemma in _lemmas(word):
            if lemma != word and (self._key(lemma),) in self._by_stems:
                return lemma
        return None

    def _fuzzy(self, word: str) -> str | None:
        if len(word) < FUZZY_MIN_LENGTH or not self._single_words:
            return None
        try:
            from rapidfuzz import fuzz, process
        except ImportError:  # not in the Lambda layer; exact stems still match there
            return None
        best = process.extractOne(word, self._single_words, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SCORE)
        return best[0] if best else None


@lru_cache(maxsize=4096)
def _lemmas(word: str) -> tuple[str, ...]:
    """A word's dictionary forms (its two likeliest readings), once per word: several indices ask."""
    morph = _morph()
    if morph is None:
        return ()
    return tuple(dict.fromkeys(normalize(p.normal_form) for p in morph.parse(word)[:2]))


@lru_cache(maxsize=64)
def _tokens(text: str) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...], tuple[int, ...]]:
    """The words of a text, their offsets and which of them are not linking words (cached: a message is
    matched against a dozen word lists in a row)."""
    # Lower case and ё→е keep every character where it was: the offsets point into `text`.
    found = list(_WORD.finditer(fold(text)))
    tokens = tuple(m.group(0) for m in found)
    keep = tuple(i for i, w in enumerate(tokens) if w not in _LINKING)
    return tokens, tuple((m.start(), m.end()) for m in found), keep


def _as_written(word: str) -> str:
    return word


class Cues:
    """Words and phrases → values, matched on stems at word boundaries, except `exact` ones (as written)."""

    def __init__(self, entries: dict[str, Any], exact: frozenset[str] = frozenset()):
        self._stemmed = PhraseIndex({p: v for p, v in entries.items() if normalize(p) not in exact})
        self._exact = PhraseIndex({p: v for p, v in entries.items() if normalize(p) in exact}, exact=True)

    def find(self, text: str) -> list[Match]:
        """Every match, in text order (a stemmed and an exact match may overlap)."""
        found = self._stemmed.find(text) + self._exact.find(text)
        return sorted(found, key=lambda m: (m.start_char, -m.end_char))

    def search(self, text: str) -> Match | None:
        found = self.find(text)
        return found[0] if found else None

    def covers(self, text: str) -> bool:
        """The text has words and every one of them is one of the cues («да, покажи» for the yes-words)."""
        return bool(words(text)) and not words(self.remove(normalize(text)))

    def remove(self, text: str) -> str:
        """The text with every match blanked out (the same length, so offsets hold)."""
        return blank_out(text, self.find(text))


def blank_out(text: str, matches: Any) -> str:
    """The text with each match's characters replaced by spaces: the same length, so offsets still hold."""
    for m in matches:
        text = text[: m.start_char] + " " * (m.end_char - m.start_char) + text[m.end_char :]
    return text


@cache
def cues(file: str, name: str) -> Cues:
    """A cue list of a data file (`{"words": [...], "forms": [...]}`): words in any inflection, forms as written."""
    spec = data(file)[name]
    entries = {phrase: name for phrase in (*spec["words"], *spec["forms"])}
    return Cues(entries, frozenset(normalize(f) for f in spec["forms"]))


@cache
def style_cues(kind: str) -> Cues:
    """Every spelling of a wine type (`"wine_types"`) or sweetness (`"sweetness"`) → its enum value."""
    spec = data("wine_words.json")
    entries = {word: value for value, spellings in spec[kind].items() for word in spellings}
    return Cues(entries, frozenset(normalize(f) for f in spec["exact_forms"]))


def alternation(phrases: Any, *, word_start: bool = True) -> str:
    """A regular expression for exact phrases (longest first; spaces match any run of spaces; a phrase must
    end a word, and start one unless `word_start` is off, for a unit right after a number: «5к»).
    For the grammar around words: «до» before a number, «не» before a style."""
    parts = []
    for phrase in sorted({normalize(p) for p in phrases}, key=len, reverse=True):
        body = r"\s*".join(re.escape(w) for w in phrase.split(" "))
        if word_start and re.match(r"[a-zа-я0-9]", phrase):
            body = r"\b" + body
        if re.search(r"[a-zа-я0-9]$", phrase):
            body += r"\b"
        parts.append(body)
    return "(?:" + "|".join(parts) + ")"


@cache
def mood_cue_pattern() -> re.Pattern[str]:
    """Words that begin with a mood's stem (not a dish's or a style's), a mood cue or a comparative
    (occasions.json): a mood request."""
    spec = data("occasions.json")
    moods = [m for m in spec["moods"] if m["concept"] not in spec["not_cues"]]
    starts = {s for m in moods for s in m["stems"]} | set(spec["cues"]) | set(spec["comparatives"])
    body = "|".join(r"\s+".join(map(re.escape, s.split())) for s in sorted(starts, key=len, reverse=True))
    return re.compile(r"(?<![a-zа-я0-9])(?:" + body + r")[a-zа-я0-9]*")


# ---------------------------------------------------------------- countries and regions


class Country(NamedTuple):
    code: str
    name: str
    genitive: str
    adjective: str


class Region(NamedTuple):
    name: str
    country: str  # ISO code
    genitive: str


@cache
def _countries() -> tuple[dict[str, Country], PhraseIndex]:
    by_code: dict[str, Country] = {}
    phrases: dict[str, str] = {}
    for item in data("countries.json")["countries"]:
        adjectives = item["adjectives"]
        country = Country(item["code"], item["name"], item["genitive"], adjectives[0] if adjectives else "")
        by_code[country.code] = country
        for phrase in (item["name"], item["genitive"], *item["official"], *adjectives, *item["aliases"]):
            phrases[phrase] = country.code
    return by_code, PhraseIndex(phrases)


def countries() -> list[Country]:
    return list(_countries()[0].values())


def country_by_code(code: str | None) -> Country | None:
    return _countries()[0].get(code or "")


def countries_in(text: str, *, fuzzy: bool = False) -> list[tuple[Match, Country]]:
    by_code, index = _countries()
    return [(m, by_code[m.value]) for m in index.find(text, fuzzy=fuzzy)]


def country(text: str, *, fuzzy: bool = True) -> Country | None:
    """The country a whole value names («Соединенные Штаты Америки», «USA», «американское» → США)."""
    found = countries_in(text, fuzzy=fuzzy)
    if found and len({c.code for _, c in found}) == 1:
        return found[0][1]
    if not found:  # a region stands for its country («Крым», «Tuscany»)
        place = region(text)
        if place:
            return country_by_code(place.country)
    return None


@cache
def _regions() -> tuple[dict[str, Region], PhraseIndex]:
    by_name: dict[str, Region] = {}
    phrases: dict[str, tuple[str, bool]] = {}  # phrase → (region name, is a subregion)
    for item in data("regions.json")["regions"]:
        region = Region(item["name"], item["country"], item["genitive"])
        by_name[region.name] = region
        for phrase in (item["name"], item["genitive"], *item["aliases"]):
            phrases[phrase] = (region.name, False)
        for phrase in item["subregions"]:
            phrases[phrase] = (region.name, True)
    return by_name, PhraseIndex(phrases)


def regions() -> list[Region]:
    return list(_regions()[0].values())


def regions_in(text: str) -> list[tuple[Match, Region, bool]]:
    """(match, region, whether the words name a subregion of it: «Болгери» → Тоскана, True)."""
    by_name, index = _regions()
    return [(m, by_name[m.value[0]], m.value[1]) for m in index.find(text)]


def region(text: str) -> Region | None:
    """The region a value names in any spelling («Tuscany» → Тоскана); a subregion is not the region."""
    found = [r for _, r, sub in regions_in(text) if not sub]
    return found[0] if found else None


def region_spellings(place: Region) -> list[str]:
    """Every way the vocabulary writes a region (name, genitive, aliases) and the places inside it
    (Тоскана → тоскана, tuscany, toscana, …, кьянти, chianti, болгери): a wine from any of them is from it."""
    item = next(i for i in data("regions.json")["regions"] if i["name"] == place.name)
    return [item["name"], item["genitive"], *item["aliases"], *item["subregions"]]


# ---------------------------------------------------------------- grapes


class Grape(NamedTuple):
    name: str
    latin: str
    colour: str
    genitive: str = ""
    rare: bool = False  # seldom met outside its home: a wine made mostly from it is unusual
    # Typical structure of a dry varietal wine (None where the data has none).
    body: str | None = None  # light | medium | full
    acidity: str | None = None  # low | medium | high
    tannin: str | None = None  # none | low | medium | high
    aromas: tuple[str, ...] = ()


@cache
def _grapes() -> tuple[dict[str, Grape], PhraseIndex]:
    by_name: dict[str, Grape] = {}
    phrases: dict[str, str] = {}
    for item in data("grapes.json")["grapes"]:
        grape = Grape(
            item["name"],
            item["latin"],
            item["colour"],
            item["genitive"],
            item.get("rare", False),
            item.get("body"),
            item.get("acidity"),
            item.get("tannin"),
            tuple(item.get("aromas", ())),
        )
        by_name[grape.name] = grape
        for phrase in (item["name"], item["latin"], *item["aliases"]):
            phrases[phrase] = grape.name
    return by_name, PhraseIndex(phrases)


def grapes() -> list[Grape]:
    return list(_grapes()[0].values())


def grapes_in(text: str, *, fuzzy: bool = False) -> list[tuple[Match, Grape]]:
    by_name, index = _grapes()
    return [(m, by_name[m.value]) for m in index.find(text, fuzzy=fuzzy)]


@cache
def _grapes_in_messages() -> PhraseIndex:
    """Every spelling and shared first word («каберне») → the grape's name; without the aliases that are
    everyday words in a message (grapes.json `not_in_messages`)."""
    everyday = {normalize(w) for w in data("grapes.json")["not_in_messages"]}
    return PhraseIndex({alias: name for alias, name in grape_aliases().items() if alias not in everyday})


def grape_names_in(text: str) -> list[Match]:
    """Grapes a customer's message names; each Match.value is the canonical name («Пино Нуаром» → «Пино
    Нуар») or a first word several grapes share («каберне» → «Каберне»)."""
    return _grapes_in_messages().find(text)


def grape(text: str, *, fuzzy: bool = True) -> Grape | None:
    """The grape a whole value names, in any spelling («Shiraz», «шираз» → Сира; «мальбэк» → Мальбек)."""
    # Spellings that stem alike («Каберне Совиньон», «каберне-совиньон») are one hit, not an ambiguity.
    found = list({(m.start, m.end, g.name): (m, g) for m, g in grapes_in(text, fuzzy=fuzzy)}.values())
    if len(found) == 1 and found[0][0].start == 0 and found[0][0].end == len([w for w in words(text)]):
        return found[0][1]
    if len(found) == 1 and len(words(text)) == 1:
        return found[0][1]
    return None


def grape_genitive(name: str) -> str:
    """«из Мальбека», «из Пино Нуара» (grapes.json); a grape the data doesn't know: «из сорта X»."""
    known = _grapes()[0].get(name) or grape(name, fuzzy=False)
    if known and normalize(known.name) == normalize(name):
        return known.genitive
    return "сорта " + name


def grape_key(name: str) -> str:
    """The normalised key a grape is stored and searched under: the canonical name when it is known."""
    known = grape(name, fuzzy=False)
    return normalize(known.name if known else name)


def grape_keys_for_query(text: str) -> list[str]:
    """Keys that satisfy a grape filter: the grape itself, or every known grape the words begin
    («каберне» → Каберне Совиньон and Каберне Фран)."""
    known = grape(text)
    if known:
        return [normalize(known.name)]
    prefix = normalize(text)
    starting = [normalize(g.name) for g in grapes() if normalize(g.name).startswith(prefix + " ")]
    return starting or [prefix]


_SHARE = re.compile(r"(\d{1,3}(?:[.,]\d+)?)\s*%")


def parse_grape(entry: str) -> tuple[str, float | None]:
    """«мерло 83%» → ("Мерло", 83.0); «Каберне Совиньон» → ("Каберне Совиньон", None).
    A known grape gets its canonical name; an unknown one keeps its spelling, capitalised."""
    share: float | None = None
    match = _SHARE.search(entry)
    text = entry
    if match:
        share = float(match.group(1).replace(",", "."))
        text = (entry[: match.start()] + " " + entry[match.end() :]).strip(" -–—:,()")
    text = " ".join(text.split())
    known = grape(text, fuzzy=False)
    if known and normalize(known.name) == normalize(text):
        return known.name, share
    # A synonym stays as the shop wrote it (Масуэло is Кариньян to the filter, Масуэло on the label).
    return (text[:1].upper() + text[1:]), share


# ---------------------------------------------------------------- food


@cache
def _food() -> tuple[dict[str, str], PhraseIndex]:
    spec = data("dishes.json")
    labels: dict[str, str] = dict(spec["categories"])
    phrases: dict[str, set[str]] = {}
    for key, label in labels.items():
        phrases.setdefault(key, set()).add(key)
        phrases.setdefault(label, set()).add(key)
    for section in ("groups", "dishes"):
        for names, categories in spec[section].items():
            unknown = set(categories) - set(labels)
            if unknown:
                raise ValueError(f"dishes.json: {names!r} names unknown categories {sorted(unknown)}")
            for name in names.split("|"):
                phrases.setdefault(name, set()).update(categories)
    return labels, PhraseIndex({phrase: frozenset(cats) for phrase, cats in phrases.items()})


def food_category_labels() -> dict[str, str]:
    return dict(_food()[0])


def dishes_in(text: str, *, fuzzy: bool = False) -> list[Match]:
    """Dish and category phrases in a text; each Match.value is the frozenset of categories."""
    return _food()[1].find(text, fuzzy=fuzzy)


def food_categories(text: str, *, fuzzy: bool = False) -> frozenset[str]:
    """The food categories a pairing or a request names: «стейк из говядины» → {говядина};
    «Закуски, салаты и антипасто» → {закуски, салаты, мясные деликатесы}; «паста» → {паста}."""
    result: set[str] = set()
    for match in dishes_in(text, fuzzy=fuzzy):
        result.update(match.value)
    return frozenset(result)


# ---------------------------------------------------------------- occasions and moods


def occasions() -> list[dict[str, Any]]:
    return list(data("occasions.json")["occasions"])


def moods() -> list[dict[str, Any]]:
    return list(data("occasions.json")["moods"])


# ---------------------------------------------------------------- shortened text


_COLOUR_SENTENCE_WORDS = 12
_COLOUR_OPENING_WORDS = 6  # a colour noun among a sentence's first words: the sentence opens with the colour


@cache
def _colour_words() -> tuple[frozenset[str], frozenset[str]]:
    """Stems of the words that name a colour, and of those a colour sentence may be made of (hues, shades)."""
    spec = data("wine_words.json")["colour"]
    nouns = frozenset(stem(w) for w in spec["nouns"])
    return nouns, frozenset(stem(w) for w in (*spec["hues"], *spec["shades"])) | nouns


def sentences(text: str) -> list[str]:
    """The sentences of a text, by razdel's Russian segmenter (abbreviations such as «12 мес.» and «Dr.» do
    not end one), never split inside a quoted name («Château St. Jean»)."""
    from razdel import sentenize

    out: list[str] = []
    pending = ""
    for part in sentenize(" ".join((text or "").split())):
        pending = f"{pending} {part.text}".strip() if pending else part.text.strip()
        if pending and not _open_quote(pending):
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return out


def _open_quote(text: str) -> bool:
    return text.count("«") > text.count("»") or text.count('"') % 2 == 1 or text.count("“") > text.count("”")


def is_colour_sentence(sentence: str) -> bool:
    """«Рубиновый цвет.», «Цвет соломенно-жёлтый с зеленоватыми отблесками.», «Рубиновое, с гранатовым
    ободком.»: a short sentence that names the colour, or is made only of hues and shades."""
    kept = [w for w in words(sentence) if w not in _LINKING]
    tokens = [stem(w) for w in kept]
    if not tokens:
        return False
    nouns, colour = _colour_words()
    flowers = frozenset(data("wine_words.json")["colour"]["flowers"])
    named = [t in nouns and w not in flowers for t, w in zip(tokens, kept, strict=True)]
    if any(named[:_COLOUR_OPENING_WORDS]):
        return True  # «Вино блестящего нежно-розового цвета с ароматом муската…» opens with the colour
    if len(tokens) > _COLOUR_SENTENCE_WORDS:
        return False
    return any(named) or all(t in colour for t in tokens)


def brief(text: str, limit: int, *, skip_colour: bool = False) -> str:
    """Whole sentences from the start of `text` up to `limit` characters (one clipped sentence if the
    first is longer); with `skip_colour`, a leading colour sentence is left out."""
    # Only the text's start can make the brief: a 20 000-character description is not segmented whole (its
    # last part read here is cut, but the parts before it already pass the limit, so it is never kept).
    parts = sentences((text or "")[: 2 * limit + 200])
    if skip_colour and len(parts) > 1 and is_colour_sentence(parts[0]):
        parts = parts[1:]
    out = ""
    for part in parts:
        candidate = f"{out} {part}".strip()
        if len(candidate) > limit:
            break
        out = candidate
    if not out and parts:
        clipped = parts[0][: max(1, limit - 1)].rsplit(" ", 1)[0].rstrip(",;:—- ")
        out = clipped + "…"
    return out


def grape_aliases() -> dict[str, str]:
    """Every spelling of every grape (normalised) → its canonical name; a first word that several grapes
    share stands for them all («каберне» → «Каберне», which the grape filter widens to each Каберне)."""
    table: dict[str, str] = {}
    first_words: dict[str, set[str]] = {}
    for item in data("grapes.json")["grapes"]:
        for phrase in (item["name"], item["latin"], *item["aliases"]):
            table[normalize(phrase)] = item["name"]
        first_words.setdefault(item["name"].split()[0], set()).add(item["name"])
    for word, names in first_words.items():
        if len(names) > 1:
            table.setdefault(normalize(word), word)
    return table


# ---------------------------------------------------------------- catalogue columns

_UNIT_IN_BRACKETS = re.compile(r"\([^)]*\)")


@cache
def _catalog_columns() -> dict[str, str]:
    spec = data("catalog_columns.json")["columns"]
    return {_header_key(alias): field for field, aliases in spec.items() for alias in aliases}


_CAMEL_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _header_key(header: str) -> str:
    # «wineColor», «price_rub», «Цена (руб.)» and «Цена, руб» all read as words
    return " ".join(words(_UNIT_IN_BRACKETS.sub(" ", _CAMEL_HUMP.sub(" ", header)).replace("₽", " ")))


def catalog_column(header: str) -> str | None:
    """The catalogue field a shop's own column name means («Сорт винограда» → grape_varieties,
    «Цена, руб.» → price_rub, «wineColor» → wine_type), or None. Besides the catalogue's fields, `stock` (how
    many bottles the shop has) and `category` (the shop's own section, read to tell wine from the rest)."""
    key = _header_key(header)
    found = _catalog_columns().get(key)
    if found is None and " " in key and key.rsplit(" ", 1)[1] in _money_words():  # «Цена, руб.»
        found = _catalog_columns().get(key.rsplit(" ", 1)[0])
    if found is None and " " in key and key.rsplit(" ", 1)[1].isdigit():  # «Остаток-1», «Цена 2»
        found = _catalog_columns().get(key.rsplit(" ", 1)[0])
    return found


def stock_word(cell: str) -> bool | None:
    """What a stock cell's words say: True in stock («в наличии», «да»), False none («нет», «под заказ»),
    None when they say neither (catalog_columns.json `stock_words`)."""
    words_of = data("catalog_columns.json")["stock_words"]
    text = normalize(cell)
    if text in {normalize(w) for w in words_of["in_stock"]}:
        return True
    if text in {normalize(w) for w in words_of["none"]}:
        return False
    return None


@cache
def harvest_year_pattern() -> re.Pattern[str]:
    """A vintage after its words in a name: «год урожая 2020», «урожай: 2019» (catalog_columns.json)."""
    spoken = "|".join(
        re.escape(w) for w in sorted(data("catalog_columns.json")["harvest_words"], key=len, reverse=True)
    )
    return re.compile(rf"(?:{spoken})\s*:?\s*((?:19|20)\d{{2}})", re.IGNORECASE)


@cache
def _money_words() -> tuple[str, ...]:
    """The currency words and signs (budget.json), longest first, without a closing dot."""
    spellings = {normalize(w).rstrip(".") for w in data("budget.json")["units"]["money"]}
    return tuple(sorted(spellings - {""}, key=len, reverse=True))


def without_currency(amount: str) -> str:
    """A price cell without spaces and its currency word or sign: «1 890 руб.», «1890р», «₽ 1890» → «1890»."""
    text = _SPACES.sub("", amount).lower().rstrip(".")  # thin and no-break spaces are spaces too; a minus stays
    for word in _money_words():
        if text.endswith(word) and text[: -len(word)][-1:].isdigit():
            return text[: -len(word)]
        if text.startswith(word) and text[len(word) :][:1].isdigit():
            return text[len(word) :]
    return text


# ---------------------------------------------------------------- enums and spelling


def enum_words(kind: str) -> dict[str, str]:
    """Every spelling of a wine type (`kind="wine_types"`) or sweetness (`"sweetness"`) → its enum value."""
    return {normalize(word): value for value, spellings in data("wine_words.json")[kind].items() for word in spellings}


def style_in_words(cell: str) -> tuple[str | None, str | None]:
    """The wine type and sweetness a shop's style cell names, read whole: «Игристое белое брют», «Вино красное
    сухое», «экстра брют». A sparkling word makes the type sparkling whatever the colour (the catalogue's types
    are red, white, rose, sparkling). Either is None when the cell names two of it, and both are None when the
    cell has any other word, so an unknown word («оранжевое») stays an error that names it."""
    text = normalize(cell)
    found = [(m, kind) for kind in ("wine_types", "sweetness") for m in style_cues(kind).find(text)]
    found += [(m, "wine") for m in cues("wine_words.json", "wine").find(text)]
    kept: list[tuple[Match, str]] = []  # a longer phrase wins over the words inside it («demi sec» over «sec»)
    for match, kind in sorted(found, key=lambda f: f[0].start_char - f[0].end_char):
        span = match.end_char - match.start_char
        if not any(
            k.start_char <= match.start_char and match.end_char <= k.end_char and k.end_char - k.start_char > span
            for k, _ in kept
        ):
            kept.append((match, kind))
    left = blank_out(text, (match for match, _ in kept))
    if [w for w in words(left) if w not in _LINKING] or not kept:
        return None, None
    types = {m.value for m, kind in kept if kind == "wine_types"}
    sugar = {m.value for m, kind in kept if kind == "sweetness"}
    wine_type = "sparkling" if "sparkling" in types else (next(iter(types)) if len(types) == 1 else None)
    return wine_type, (next(iter(sugar)) if len(sugar) == 1 else None)


@cache
def _shorthand() -> tuple[re.Pattern[str], dict[str, str]]:
    table = {key.lower(): word for key, word in data("shop_shorthand.json")["shorthand"].items()}
    keys = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
    return re.compile(rf"(?<![^\W\d_])({keys})\.?(?![^\W\d_])", re.IGNORECASE), table


def expand_shorthand(text: str) -> str:
    """A price list's style abbreviations written out: «Кьянти кр.сух» → «Кьянти красное сухое»,
    «игр. бел. п/сл.» → «игристое белое полусладкое» (shop_shorthand.json)."""
    pattern, table = _shorthand()
    return pattern.sub(lambda m: f" {table[m.group(1).lower()]} ", text)


@cache
def _blend_words() -> frozenset[str]:
    return frozenset(normalize(w) for w in data("wine_words.json")["blend"])


def blend_word(text: str) -> bool:
    """A grape cell that says «a blend» («Купаж», «Red Blend») rather than naming a grape."""
    return normalize(text) in _blend_words()


def correct_spelling(text: str) -> str:
    """Misspelt style words put right («крассное» → «красное»), each kept at its place in the text: a
    corrected word is padded with spaces to the misspelling's length, so character offsets still hold.
    Without rapidfuzz the text is returned as it is."""
    try:
        from rapidfuzz import fuzz, process
    except ImportError:
        return text
    styles, grape_words = _spelling_targets()
    out = text
    for match in re.finditer(r"[а-яё]{5,}", text):
        word = match.group(0)
        if word in styles or word in grape_words:
            continue
        best = process.extractOne(word, styles, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SCORE + 4)
        if not (best and best[0][:2] == word[:2]):
            # A grape misspelt by ear («рислинк», «савиньон»): one letter off, same first letter and length ±1.
            best = process.extractOne(word, grape_words, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SCORE)
            if not (best and best[0][0] == word[0] and abs(len(best[0]) - len(word)) <= 1):
                continue
        # A correction one letter longer («санжовезе» → «санджовезе») is written as its stem, which fits and
        # matches the same («санджовез»).
        fixed = best[0] if len(best[0]) <= len(word) else stem(best[0])
        if len(fixed) <= len(word):
            out = out[: match.start()] + fixed.ljust(len(word)) + out[match.end() :]
    return out


@cache
def _spelling_targets() -> tuple[tuple[str, ...], frozenset[str]]:
    """Style words, and the Cyrillic words of grape names, long enough to be told apart from others."""
    styles = tuple(sorted({w for kind in ("wine_types", "sweetness") for w in enum_words(kind) if len(w) >= 5}))
    grape_words = {
        w for phrase in grape_aliases() for w in phrase.split() if len(w) >= 5 and re.fullmatch(r"[а-я]+", w)
    }
    return styles, frozenset(grape_words - set(styles))


# ---------------------------------------------------------------- inflection (pymorphy3, only where it is paid for)

_LINKING_WORDS = ("из", "с", "со", "на", "в", "под", "по")


@cache
def _morph():
    try:
        import pymorphy3
    except ImportError:  # not in the Lambda layer: callers fall back to a quoted form
        return None
    return pymorphy3.MorphAnalyzer()


def inflect(phrase: str, case: str) -> str | None:
    """The phrase in a grammatical case («азиатская кухня», "datv" → «азиатской кухне»), inflecting the
    words before the first linking word («паста с морепродуктами» → «пасте с морепродуктами»).
    None when pymorphy3 is not installed or a word can't be inflected (foreign names: use «сорта X»)."""
    morph = _morph()
    if morph is None:
        return None
    out: list[str] = []
    inflecting = True
    for word in phrase.split():
        if word.lower() in _LINKING_WORDS:
            inflecting = False
        if not inflecting or not re.fullmatch(r"[а-яё]+", word.lower()):
            out.append(word)
            continue
        parsed = morph.parse(word)[0]
        if parsed.tag.POS not in {"NOUN", "ADJF"} or "Fixd" in parsed.tag:
            out.append(word)
            continue
        changed = parsed.inflect({case})
        if changed is None:
            return None
        out.append(changed.word)
    return " ".join(out)


# ---------------------------------------------------------------- the glossary: wine terms explained


class GlossaryTopic(NamedTuple):
    key: str
    title: str
    asked_by: re.Pattern[str]
    answer: str


@cache
def _glossary() -> dict[str, GlossaryTopic]:
    return {
        t["key"]: GlossaryTopic(
            t["key"], t["title"], re.compile(r"(?<![a-zа-я0-9])(?:" + t["asked_by"] + r")"), t["answer"]
        )
        for t in data("glossary.json")["topics"]
    }


def glossary_topics() -> list[GlossaryTopic]:
    return list(_glossary().values())


def glossary_topic(key: str) -> GlossaryTopic | None:
    return _glossary().get(key)


def glossary_topic_asked(text: str) -> GlossaryTopic | None:
    """The topic the text asks about: the one named earliest, so the subject of «чем брют отличается от
    сухого» (брют) wins over what it is compared with; the longer words at the same place."""
    prepared = " ".join((text or "").lower().replace("ё", "е").replace("-", " ").split())
    best: tuple[int, int, GlossaryTopic] | None = None
    for topic in _glossary().values():
        found = topic.asked_by.search(prepared)
        if found is None:
            continue
        candidate = (found.start(), -(found.end() - found.start()), topic)
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    return best[2] if best else None


# ---------------------------------------------------------------- wines known by name


class NamedWine(NamedTuple):
    """A famous wine and what its name tells: the attributes of the nearest wines to offer instead."""

    name: str
    wine_type: str
    sweetness: str | None
    grape: str | None
    region: str | None
    country: str | None  # ISO code


@cache
def _named_wines() -> PhraseIndex:
    entries: dict[str, NamedWine] = {}
    for item in data("named_wines.json")["wines"]:
        wine = NamedWine(
            item["name"], item["wine_type"], item["sweetness"], item["grape"], item["region"], item["country"]
        )
        for spelling in (item["name"], *item["names"]):
            entries[fold_accents(spelling)] = wine
    return PhraseIndex(entries)


def named_wines_in(text: str) -> list[tuple[Match, NamedWine]]:
    """Famous wines named in a text («Есть у вас Petrus?», «Сассикайя»)."""
    found: dict[tuple[int, int], tuple[Match, NamedWine]] = {}
    for m in _named_wines().find(fold_accents(text)):
        found.setdefault((m.start_char, m.end_char), (m, m.value))
    return list(found.values())


# The appellations and the words of Russian legal names live in language/knowledge.py; they load on first
# use (the tool function and the webhook import this package and need none of them).
_KNOWLEDGE = frozenset(
    {"Appellation", "LegalReading", "appellation", "appellations", "appellations_in", "legal_reading", "non_wine"}
)

if TYPE_CHECKING:
    from sommelier.language.knowledge import (
        Appellation as Appellation,
    )
    from sommelier.language.knowledge import (
        LegalReading as LegalReading,
    )
    from sommelier.language.knowledge import (
        appellation as appellation,
    )
    from sommelier.language.knowledge import (
        appellations as appellations,
    )
    from sommelier.language.knowledge import (
        appellations_in as appellations_in,
    )
    from sommelier.language.knowledge import (
        legal_reading as legal_reading,
    )
    from sommelier.language.knowledge import (
        non_wine as non_wine,
    )


def __getattr__(name: str) -> Any:
    if name in _KNOWLEDGE:
        from sommelier.language import knowledge

        return getattr(knowledge, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
