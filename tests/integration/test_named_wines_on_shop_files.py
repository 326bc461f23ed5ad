"""Wines asked for by name on real shops' files (tests/data/catalogues, sources in SOURCES.md there), imported
raw into the in-memory store, answered by the offline responder (issue 38, item 5).

Every expectation is written by hand from the files' rows: which row a customer's words name (in Latin, in
Cyrillic, lower-case, misspelt), and which names the shop does not have. «Есть» is checked in the words the
customer reads: an answer that shows a wine for a name must show the row named; an absent name never gets «да,
есть» and never a card that bears the name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sommelier.catalog.importer import import_catalog
from sommelier.domain.answer import answer_as_text
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.offline import OfflineResponder
from sommelier.photos.store import LocalPhotoStore
from sommelier_dev.memory import MemoryStore, memory_repositories

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogues"
GETMYWINE = "getmywine_wines_seed.json"
GLOBUS = "vinorate_globus_every25th.tsv"
PEREKRESTOK = "vinorate_perekrestok_every15th.tsv"
ALKOTEKA = "alkoteka_every8th.json"
VINOTEKA = "vinoteka34_inventory.json"
CLAIMED = re.compile(r"^(Да, )?.{0,80}(в нашем каталоге есть|в каталоге есть)")


@pytest.fixture(scope="module")
def shops(tmp_path_factory) -> dict[str, OfflineResponder]:
    responders = {}
    for name in (GETMYWINE, GLOBUS, PEREKRESTOK, ALKOTEKA, VINOTEKA):
        store = MemoryStore()
        catalog = memory_repositories(store).catalog
        photos = LocalPhotoStore(tmp_path_factory.mktemp("photos"))
        import_catalog(DATA / name, catalog=catalog, embedder=LocalHashingEmbeddings(), photos=photos, replace=True)
        responders[name] = OfflineResponder(catalog, LocalHashingEmbeddings())
    return responders


def shown(answer) -> list[str]:
    return [w.wine_name for w in answer.response.wines]


# ------------------------------------------------------------------ every wine of a shop, by its own name

# GetMyWine's seed (50 rows, all for sale): asked «есть NAME?» and in lower case, each row's wine is shown.
# Left out by hand: «Pinot Noir Rose» (Nik Weis), whose name is only a grape and a colour: that is a request
# for a rosé Pinot Noir, answered with the shop's rosé Pinot Noirs.
_GETMYWINE_ROWS = [w["name"] for w in json.loads((DATA / GETMYWINE).read_text("utf-8"))["wines"]]
ONLY_VOCABULARY = {"Pinot Noir Rose"}


@pytest.mark.parametrize("name", [n for n in _GETMYWINE_ROWS if n not in ONLY_VOCABULARY])
def test_every_wine_of_a_shop_is_found_by_its_own_name(shops, name):
    for said in (f"есть {name}?", name.lower()):
        answer = shops[GETMYWINE].respond(said)
        assert name in shown(answer), (said, shown(answer), answer_as_text(answer.response))


# ------------------------------------------------------------------ names as customers say them

# (shop, what the customer writes, the rows it names: each must be shown, and nothing that does not bear it)
FOUND = [
    # Latin producers and wines asked in Cyrillic, lower-case, misspelt
    (GETMYWINE, "паддл крик совиньон", {"Paddle Creek Sauvignon Blanc"}),
    (GETMYWINE, "Луиджи Боска мальбек", {"Malbec"}),
    (GETMYWINE, "luigi bosca", {"Malbec"}),
    (GETMYWINE, "трапиче", {"Pure Malbec"}),
    (GETMYWINE, "фрескобальди", {"Chianti Castiglioni", "Remole Bianco", "Alie Rose"}),
    (GETMYWINE, "есть шумринка?", {"Петрикор Красное", "Петрикор Совиньон Блан", "Шумринка розовое"}),
    (GETMYWINE, "мисти клифф", {"Misty Cliff Sauvignon Blanc"}),
    (GETMYWINE, "эль пикаро", {"El Picaro"}),
    (GETMYWINE, "кларендель", {"Clarendelle by Haut-Brion Rouge", "Clarendelle a par Haut-Brion Rose"}),
    (GETMYWINE, "есть лансон?", {"Le Black Creation Brut в подарочной упаковке"}),
    # a supermarket's Latin shelf, asked as customers say it
    (GLOBUS, "trapiche sauvignon blanc", {"Trapiche Sauvignon Blanc"}),
    (GLOBUS, "трапиче совиньон блан", {"Trapiche Sauvignon Blanc"}),
    (GLOBUS, "Киндзмараули", {"Marani Kindzmarauli"}),
    (GLOBUS, "есть кинзмараули?", {"Marani Kindzmarauli"}),
    (GLOBUS, "марани", {"Marani Kindzmarauli", "Marani Alazani Valley"}),
    # Georgian PDOs on a Cyrillic shelf, asked in Latin too
    (PEREKRESTOK, "есть киндзмараули?", {"Киндзмараули"}),
    (PEREKRESTOK, "kindzmarauli", {"Киндзмараули"}),
    (PEREKRESTOK, "хванчкара", {"Тайна Колхиды Хванчкара"}),
    (PEREKRESTOK, "khvanchkara", {"Тайна Колхиды Хванчкара"}),
    (PEREKRESTOK, "бадагони", {"Badagoni Саперави"}),
    # a retailer's Cyrillic catalogue: PDOs, houses, brands
    (ALKOTEKA, "Мукузани", {"Шато Мере Мукузани"}),
    (ALKOTEKA, "mukuzani", {"Шато Мере Мукузани"}),
    (ALKOTEKA, "амароне", {"Мюзелла Амароне делла Вальполичелла Ризерва"}),
    (ALKOTEKA, "есть Amarone?", {"Мюзелла Амароне делла Вальполичелла Ризерва"}),
    (ALKOTEKA, "Моэт", {"Моэт и Шандон Империаль Розе"}),
    (ALKOTEKA, "moet", {"Моэт и Шандон Империаль Розе"}),
    (ALKOTEKA, "моэт розовое", {"Моэт и Шандон Империаль Розе"}),
    (ALKOTEKA, "киндзмараули", {"Чинебули Киндзмараули"}),
    (ALKOTEKA, "мангуп мерло", {"Мангуп Мерло Каберне Совиньон Каберне Фран"}),
    (
        ALKOTEKA,
        "есть Усадьба Дивноморское Блан де Нуар?",
        {"Усадьба Дивноморское Блан де Нуар"},
    ),
    # a 1C stock list of legal names
    (
        VINOTEKA,
        "ramon bilbao",
        {"Рамон Бильбао Лаломба Финка Вальонта"},
    ),
    (VINOTEKA, "амароне", {"Амароне делла Вальполичелла"}),
]


def _holds(wine, phrase: str) -> bool:
    """The row's own words in the wine shown: its name, or its name and producer (an importer that takes the
    producer or the volume out of a shop's name keeps them)."""
    have = " ".join(f"{wine.producer} {wine.name}".lower().replace("ё", "е").split())
    return all(word in have for word in phrase.lower().replace("ё", "е").split())


@pytest.mark.parametrize(("shop", "said", "rows"), FOUND, ids=[f"{s[:8]}:{q}" for s, q, _ in FOUND])
def test_a_wine_named_as_customers_say_it_is_found(shops, shop, said, rows):
    answer = shops[shop].respond(said)
    text = answer_as_text(answer.response)
    assert answer.response.response_type == "recommendation", text
    found = {w.id: w for w in answer.found_wines}
    wines = [found[rec.wine_id] for rec in answer.response.wines]
    # each row named is shown (all of them, or three when the shop has more under the name) …
    named = [row for row in rows if any(_holds(w, row) for w in wines)]
    assert len(named) == len(rows) or len(wines) == 3, (said, shown(answer), text)
    # … and nothing else: every wine shown is one of them
    assert all(any(_holds(w, row) for row in rows) for w in wines), (said, shown(answer))
    assert "нет" not in text.split(".")[0], f"{said}: found, yet the answer opens with a «нет»: {text}"


def test_a_wine_name_is_never_off_topic(shops):
    for shop, said in [(ALKOTEKA, "Усадьба Дивноморское"), (ALKOTEKA, "цинандали"), (GLOBUS, "хванчкара")]:
        answer = shops[shop].respond(said)
        assert answer.intent.kind == "recommendation", (said, answer_as_text(answer.response))
        assert answer.response.response_type != "off_topic"


# ------------------------------------------------------------------ what a shop does not have

# (shop, what the customer writes, a word of the name no shown wine may bear, what close wines must be)
ABSENT = [
    # Cloudy Bay: no file has it; the close wines are Sauvignon Blancs, none of them a Cloudy Bay
    (GETMYWINE, "Cloudy Bay совиньон", "cloudy", {"grape": "Совиньон Блан"}),
    (GLOBUS, "Cloudy Bay совиньон", "cloudy", {"grape": "Совиньон Блан"}),
    (VINOTEKA, "Cloudy Bay совиньон", "cloudy", {"grape": "Совиньон Блан"}),
    # Petrus: «Петроний» and «Петер Мертес» are not it
    (VINOTEKA, "петрюс", "петрюс", {"wine_type": "red"}),
    (GETMYWINE, "есть мукузани?", "мукузани", {"wine_type": "red"}),
    (GLOBUS, "Цинандали есть?", "цинандали", {"wine_type": "white"}),
    (GETMYWINE, "Sassicaia", "sassicaia", {"wine_type": "red"}),
]


@pytest.mark.parametrize(("shop", "said", "word", "close"), ABSENT, ids=[f"{s[:8]}:{q}" for s, q, _, _ in ABSENT])
def test_a_wine_the_shop_lacks_is_never_claimed(shops, shop, said, word, close):
    answer = shops[shop].respond(said)
    text = answer_as_text(answer.response)
    assert not CLAIMED.search(text), f"{said}: claimed present: {text}"
    assert re.search(r"\bнет\b|не нашлось", text.split("\n")[0]), f"{said}: no honest «нет»: {text}"
    found = {w.id: w for w in answer.found_wines}
    for rec in answer.response.wines:
        wine = found[rec.wine_id]
        assert word not in f"{wine.name} {wine.producer}".lower(), (said, wine.name)
        if "grape" in close:
            assert close["grape"] in wine.grape_varieties or close["grape"].lower() in wine.name.lower(), wine.name
        if "wine_type" in close:
            assert wine.wine_type == close["wine_type"], (said, wine.name, wine.wine_type)
    if answer.response.wines:  # «ближе всего по стилю — …»: it says what is close
        assert "Ближе всего" in text, text


def test_a_producer_the_shop_has_under_other_conditions_is_said_so(shops):
    # GetMyWine stocks Trapiche's Malbec, not its Sauvignon Blanc: the answer says both, truly.
    answer = shops[GETMYWINE].respond("trapiche sauvignon blanc")
    text = answer_as_text(answer.response)
    assert text.startswith("Trapiche в нашем каталоге есть, но не под ваши условия (Совиньон Блан)"), text
    assert shown(answer) == ["Pure Malbec"]
