"""End to end, what the customer reads (the fake Bot API's texts and captions) when a wine is asked for by name
and when countries are ruled out (issue 38, items 5 and 6), on a real shop's file imported raw
(tests/data/catalogues/getmywine_wines_seed.json), offline and in LLM mode.

Which wines were shown is read from the photo captions; their facts from the shop file itself, never from the
code under test. The expectations were written by hand from the file's rows.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from tests.bot_harness import configure_bot, deliver, make_bot
from tests.conftest import memory_with_catalogue_replaced
from tests.fakes.openai_server import reply
from tests.fakes.telegram_updates import TEST_CHAT, text_update

SHOP_FILE = Path(__file__).resolve().parents[1] / "data" / "catalogues" / "getmywine_wines_seed.json"
ROWS = json.loads(SHOP_FILE.read_text("utf-8"))["wines"]
_ids = iter(range(93_000, 94_000))


def _norm(text: str) -> str:
    return " ".join((text or "").replace("\u00a0", " ").replace("\u202f", " ").lower().replace("ё", "е").split())


@pytest.fixture
def shop(memory_template, tmp_path):
    return memory_with_catalogue_replaced(memory_template, SHOP_FILE, tmp_path / "photos")


def _said(bot, telegram, text: str) -> tuple[str, list[dict]]:
    """What the customer read for one message: the texts and captions joined, and the rows its wine cards
    show (a card's first line: «<b>Name</b> — Producer, Year», as a caption or a text of its own)."""
    before = len(telegram.sent_messages(TEST_CHAT))
    deliver(bot, text_update(next(_ids), text))
    new = telegram.sent_messages(TEST_CHAT)[before:]
    said = "\n".join(c.params.get("text") or c.params.get("caption") or "" for c in new)
    return said, [_row(html.unescape(m.group(1))) for m in CARD.finditer(said)]


CARD = re.compile(r"^<b>(.+?)</b> — ", re.M)


def _row(name: str) -> dict:
    """The shop file's row a card names (the card's name line may leave out the vintage, size and producer the
    row's name carries: every word the card shows is a word of the row's name)."""
    named = [w for w in ROWS if _norm(w["name"]) == _norm(name)] or [
        w for w in ROWS if set(re.findall(r"\w+", _norm(name))) <= set(re.findall(r"\w+", _norm(w["name"])))
    ]
    assert named, name
    return named[0]


@pytest.fixture
def offline(monkeypatch, telegram, shop):
    configure_bot(monkeypatch, telegram, shop, unset=("OPENAI_API_KEY", "QUEUE_URL", "IDEMPOTENCY_TABLE"))
    return make_bot(shop, telegram)


def test_offline_a_producer_said_in_cyrillic_shows_its_wine(offline, telegram):
    said, shown = _said(offline, telegram, "паддл крик совиньон")
    assert [w["name"] for w in shown] == ["Paddle Creek Sauvignon Blanc"], said
    assert "в нашем каталоге есть" in said


def test_offline_a_producer_the_shop_stocks_in_another_style_is_said_truly(offline, telegram):
    said, shown = _said(offline, telegram, "trapiche sauvignon blanc")
    assert [(w["name"], w["producer"]) for w in shown] == [("Pure Malbec", "Trapiche")], said
    assert "не под ваши условия" in said and "Совиньон Блан" in said


def test_offline_a_wine_the_shop_lacks_is_never_said_to_be_there(offline, telegram):
    said, shown = _said(offline, telegram, "Cloudy Bay совиньон")
    first = said.split("\n")[0]
    assert "Cloudy Bay" in first and re.search(r"\bнет\b", first), said
    assert "есть, но" not in said and "Да, Cloudy Bay" not in said
    assert shown and all("совиньон блан 100%" in w["grape_varieties"] for w in shown), shown
    assert all("cloudy" not in w["name"].lower() for w in shown)


def test_offline_an_appellation_is_a_wine_asked_for_not_off_topic(offline, telegram):
    said, shown = _said(offline, telegram, "Киндзмараули есть?")
    assert "сомелье" not in said.split("\n")[0], "a wine's name is never off-topic"
    assert "Киндзмараули в нашем каталоге нет" in said or "Киндзмараули у нас в каталоге нет" in said, said
    assert all(w["wine_type"] == "red" for w in shown), shown  # the close wines: red, as Kindzmarauli is


def test_offline_several_countries_ruled_out_and_one_more_in_a_follow_up(offline, telegram):
    said, shown = _said(offline, telegram, "красное, но кроме Италии и Франции")
    assert shown, said
    assert all(w["wine_type"] == "red" and w["country"] not in ("Италия", "Франция") for w in shown), shown
    assert "не из Италии и Франции" in said
    said, shown = _said(offline, telegram, "а не из России?")
    assert shown, said
    assert all(w["country"] not in ("Италия", "Франция", "Россия") for w in shown), shown


def test_offline_only_not_from_argentina_and_the_follow_up(offline, telegram):
    said, shown = _said(offline, telegram, "мальбек")
    assert any(w["country"] == "Аргентина" for w in shown), shown
    said, shown = _said(offline, telegram, "а не из Аргентины?")
    assert shown and all(w["country"] != "Аргентина" for w in shown), (said, shown)
    said, shown = _said(offline, telegram, "красное, только не из Аргентины")
    assert shown and all(w["country"] != "Аргентина" for w in shown), (said, shown)


# ---------------------------------------------------------------------------- LLM mode


def _first_candidates(body: dict):
    """A deterministic model: the first two prefetched candidates, whatever they are."""
    prompt = body["messages"][1]["content"]
    part = prompt.split("## Кандидаты", 1)[1] if "## Кандидаты" in prompt else ""
    rows = [json.loads(line) for line in part.splitlines() if line.startswith("{")][:2]
    wines = [{"ref": r["ref"], "reason": "Подходит под запрос."} for r in rows]
    kind = "recommendation" if wines else "informational"
    answer = {"response_type": kind, "intro": "Вот что нашлось.", "wines": wines, "closing": "Ещё?"}
    return reply(json.dumps({**answer, "guard_type": None}, ensure_ascii=False))


@pytest.fixture
def with_llm(monkeypatch, telegram, llm, shop):
    configure_bot(monkeypatch, telegram, shop, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE"))
    monkeypatch.setenv("LLM_STREAM", "false")
    bot = make_bot(shop, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = _first_candidates
    return bot


def test_llm_mode_rules_out_every_country_named(with_llm, telegram, llm):
    said, shown = _said(with_llm, telegram, "красное, но кроме Италии и Франции")
    assert shown, said
    assert all(w["country"] not in ("Италия", "Франция") for w in shown), shown
    prompt = llm.chat_requests[-1]["messages"][1]["content"]
    assert "Италия, Франция" in prompt, "the model is told both countries are ruled out"


def test_llm_mode_a_wine_asked_for_by_name_is_put_first_before_the_model(with_llm, telegram, llm):
    said, shown = _said(with_llm, telegram, "паддл крик совиньон")
    assert shown and shown[0]["name"] == "Paddle Creek Sauvignon Blanc", (said, shown)
    said, shown = _said(with_llm, telegram, "есть Cloudy Bay?")
    prompt = llm.chat_requests[-1]["messages"][1]["content"]
    assert "Cloudy Bay" in prompt and "ничего не нашёл" in prompt, "the model is told the shop has no Cloudy Bay"
    assert all("cloudy" not in w["name"].lower() for w in shown)
