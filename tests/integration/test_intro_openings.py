"""No boilerplate sentence opens more than one intro in ten (issue: text a customer reads).

Over a varied set of realistic requests, on the shipped catalogue and on a sample of a real shop's 1C list
(tests/data/catalog/vinoteka34-sample.json), the oracle takes each answer's first sentence and reduces it to
its fixed words: what is quoted or in brackets and the prices are masked, numbers and number words too, and the sentence is
read by its first three and its last three words. A template repeats one or the other whatever the request
says («Вот три вина по вашему запросу: …», «… — есть из чего выбрать»), so neither may start more than one
intro in ten. The oracle shares no code with the writer: its sentence split and masking are its own.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.offline import OfflineResponder
from sommelier_dev.memory import memory_repositories

from tests.conftest import ROOT, memory_with_catalogue_replaced

SAMPLE = ROOT / "tests" / "data" / "catalog" / "vinoteka34-sample.json"
MAX_SHARE = 0.10

# How customers ask: dishes, occasions, colours and styles, budgets, grapes, places, named wines, mixes.
REQUESTS = [
    "красное сухое до 2000",
    "белое вино к рыбе",
    "вино к шашлыку",
    "что открыть к плову",
    "посоветуй вино к стейку",
    "что-нибудь к устрицам",
    "к тирамису",
    "вино к утке до 2500",
    "к пасте карбонара",
    "вино к сыру",
    "к суши что-нибудь белое",
    "игристое на день рождения",
    "вино в подарок начальнику",
    "на романтический ужин",
    "розовое на летний вечер",
    "шампанское на новый год",
    "что-нибудь на пикник",
    "полусладкое белое",
    "игристое брют",
    "розовое сухое",
    "сладкое вино к десерту",
    "бюджетное белое до тысячи трёхсот",
    "красное до полутора тысяч",
    "вино от 3000 до 5000",
    "самое дорогое красное",
    "самое дешёвое игристое",
    "каберне совиньон",
    "пино нуар к утке",
    "шардоне до 3000",
    "совиньон блан",
    "итальянское красное",
    "французское белое до 4000",
    "испанское вино",
    "вино из Бургундии",
    "красное из Бордо",
    "кьянти",
    "шабли",
    "просекко",
    "красное, но не сухое",
    "красное до 2000, только не итальянское",
    "Шато Латур есть?",
    "есть Шабли Премье Крю?",
    "лёгкое красное к курице",
    "что-нибудь необычное до 2000",
    "белое полусухое к азиатской кухне",
    "вино к пицце",
]

_QUOTED = re.compile(r"«[^»]*»|\([^)]*\)|\"[^\"]*\"")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[А-ЯЁA-Z«])")
_PRICE = re.compile(r"(?:\b(?:от|до)\s+)?\d[\d\s\u00a0\u202f]*₽")  # the customer's own budget, said back
_NUMBER_WORDS = {"одно", "один", "одна", "два", "две", "три", "четыре", "пять"}


def first_sentence(text: str) -> str:
    """The intro's first sentence; a full stop inside «…» or (…) does not end it."""
    masked = _QUOTED.sub(lambda m: "Q" * len(m.group()), text)  # same length, no stops inside
    match = _SENTENCE_END.search(masked)
    return text[: match.start()] if match else text


def fixed_words(sentence: str) -> list[str]:
    words = re.findall(r"\w+", _PRICE.sub(" ", _QUOTED.sub(" Q ", sentence)).lower().replace("ё", "е"))
    return ["N" if w.isdigit() or w in _NUMBER_WORDS else w for w in words]


def opening_shares(intros: list[str]) -> tuple[tuple[str, float], tuple[str, float]]:
    heads: Counter[str] = Counter()
    tails: Counter[str] = Counter()
    for intro in intros:
        words = fixed_words(first_sentence(intro))
        heads[" ".join(words[:3])] += 1
        tails[" ".join(words[-3:])] += 1
    (head, h), (tail, t) = heads.most_common(1)[0], tails.most_common(1)[0]
    return (head, h / len(intros)), (tail, t / len(intros))


@pytest.fixture(scope="module")
def sample_memory(memory_template, tmp_path_factory):
    return memory_with_catalogue_replaced(memory_template, SAMPLE, tmp_path_factory.mktemp("opening-photos"))


def test_the_oracle_sees_a_repeated_template():
    """The measure itself: one template with different requests in it is one opening."""
    intros = [
        f"Вот три вина по вашему запросу: {w} вино до {p} ₽. Дальше." for w, p in [("белое", 900), ("красное", 2)]
    ]
    intros += ["Красное к стейку — есть из чего выбрать.", "Белое к рыбе — есть из чего выбрать."]
    intros += ["Под «белое (сухое)» есть. Ещё."]
    (head, h), (tail, t) = opening_shares(intros)
    assert (head, h) == ("вот N вина", 0.4)
    assert (tail, t) == ("из чего выбрать", 0.4)
    assert first_sentence("По запросу «Шато Ле Ра. Розэ» нашлось. Вот") == "По запросу «Шато Ле Ра. Розэ» нашлось."


@pytest.mark.parametrize("catalogue", ["shipped", "shop"])
def test_no_boilerplate_sentence_opens_more_than_one_intro_in_ten(catalogue, catalog_memory, sample_memory):
    store = catalog_memory if catalogue == "shipped" else sample_memory
    responder = OfflineResponder(memory_repositories(store).catalog, LocalHashingEmbeddings())
    intros = [responder.respond(text).response.intro for text in REQUESTS]
    intros = [intro for intro in intros if intro]
    assert len(intros) >= 40
    (head, h), (tail, t) = opening_shares(intros)
    assert h <= MAX_SHARE, (head, h, [i for i in intros if " ".join(fixed_words(first_sentence(i))[:3]) == head])
    assert t <= MAX_SHARE, (tail, t, [i for i in intros if " ".join(fixed_words(first_sentence(i))[-3:]) == tail])
