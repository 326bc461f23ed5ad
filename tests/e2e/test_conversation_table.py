"""End to end, what the customer reads: questions about the wines just shown (issue 37), in both modes, and the
same request in fresh chats giving the same top pick.

Which wines were shown is read from the photo captions the fake Bot API recorded; their facts from the catalogue
file (data/catalog/wines.json), never from the code under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.bot_harness import configure_bot, deliver, make_bot
from tests.fakes.openai_server import reply
from tests.fakes.telegram_updates import TEST_CHAT, text_update

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = json.loads((ROOT / "data" / "catalog" / "wines.json").read_text("utf-8"))["wines"]


def _norm(text: str) -> str:
    return " ".join((text or "").replace("\u00a0", " ").replace("\u202f", " ").lower().replace("ё", "е").split())


def _price(value) -> str:
    return f"{int(value):,}".replace(",", " ") + " ₽"


def _captions(telegram, chat_id: int = TEST_CHAT) -> list[str]:
    return [c.params.get("caption") or "" for c in telegram.sent_messages(chat_id) if c.method == "sendPhoto"]


def _said(bot, telegram, update: dict, chat_id: int = TEST_CHAT) -> str:
    """Deliver the update and read what the customer got for it: the texts and captions it sent, joined."""
    before = len(telegram.sent_messages(chat_id))
    deliver(bot, update)
    new = telegram.sent_messages(chat_id)[before:]
    return "\n".join(c.params.get("text") or c.params.get("caption") or "" for c in new)


def _row(caption: str) -> dict:
    """The catalogue row a caption shows: the longest catalogue name the caption's first line holds."""
    head = _norm(caption.split("\n", 1)[0])
    named = [w for w in CATALOGUE if _norm(w["name"]) in head]
    assert named, caption
    return max(named, key=lambda w: len(w["name"]))


@pytest.fixture
def offline(monkeypatch, telegram, fresh_memory):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("OPENAI_API_KEY", "QUEUE_URL", "IDEMPOTENCY_TABLE"))
    return make_bot(fresh_memory, telegram)


def test_offline_the_price_of_the_first_and_one_chosen_are_the_shown_wines(offline, telegram):
    deliver(offline, text_update(9001, "красное сухое к стейку"))
    shown = [_row(c) for c in _captions(telegram)]
    assert len(shown) >= 2
    answer = _norm(_said(offline, telegram, text_update(9002, "сколько стоит первое?")))
    assert _norm(shown[0]["name"]) in answer and _norm(_price(shown[0]["price_rub"])) in answer
    assert len(_captions(telegram)) == len(shown), "no new cards for a question about the table"
    cheaper = _norm(_said(offline, telegram, text_update(9003, "какое из них дешевле?")))
    low = min(w["price_rub"] for w in shown)
    lead = cheaper.split(":", 1)[0]  # «Дешевле из них — X: …», or «Дешевле — X и Y: …» for a tie
    assert lead.startswith("дешевле") and all(_norm(w["name"]) in lead for w in shown if w["price_rub"] == low)
    assert not any(_norm(w["name"]) in lead for w in shown if w["price_rub"] > low)
    chosen = _norm(_said(offline, telegram, text_update(9004, "выбери одно")))
    assert any(_norm(w["name"]) in chosen for w in shown)


def test_offline_like_kindzmarauli_but_cheaper_leaves_it_out(offline, telegram):
    deliver(offline, text_update(9011, "вино как Киндзмараули, но подешевле"))
    shown = [_row(c) for c in _captions(telegram)]
    kindzmarauli = next(w for w in CATALOGUE if w["name"] == "Киндзмараули")
    assert shown and all(w["name"] != "Киндзмараули" for w in shown)
    assert all(w["wine_type"] == "red" and w["price_rub"] < kindzmarauli["price_rub"] for w in shown)
    assert any("Саперави" in w["grape_varieties"] for w in shown), "the same grape is the closest style"


def test_offline_a_total_budget_for_eight_is_a_bottle_budget(offline, telegram):
    deliver(offline, text_update(9021, "какое вино на 8 человек, бюджет 6000 на всех"))
    text = _norm(" ".join(c.params.get("text") or "" for c in telegram.sent_messages(TEST_CHAT)))
    assert "4 бутылки" in text and "1 500 ₽" in text
    assert all(_row(c)["price_rub"] <= 1500 for c in _captions(telegram))


def test_offline_a_three_course_menu_gets_a_wine_per_course(offline, telegram):
    said = _norm(_said(offline, telegram, text_update(9041, "на ужин салат с креветками, утка и сырная тарелка")))
    shown = [_row(c) for c in _captions(telegram)]
    assert len(shown) == 3, "never only the first dish"
    assert "к утке" in said and "к салат" in said
    duck = said.split("к утке — ", 1)[1]
    assert any(duck.startswith(_norm(w["name"])) for w in shown)


def _recommend_first_candidates(body: dict):
    """A deterministic model: the first two prefetched candidates, in their order."""
    prompt = body["messages"][1]["content"]
    rows = [json.loads(line) for line in prompt.split("## Кандидаты", 1)[1].splitlines() if line.startswith("{")][:2]
    wines = [{"ref": r["ref"], "reason": "Хорошо подходит к стейку."} for r in rows]  # rows name wines by ref
    answer = {"response_type": "recommendation", "intro": "Вот что есть.", "wines": wines, "closing": "Ещё?"}
    return reply(json.dumps({**answer, "guard_type": None}, ensure_ascii=False))


def _answer_from_the_table(body: dict):
    """The model reads the table the prompt gives: the first row's price."""
    prompt = body["messages"][1]["content"]
    table = prompt.split("## Вина на столе", 1)[1].split("\n## ", 1)[0]
    first = json.loads(re.search(r"^1\. (\{.*\})$", table, re.M).group(1))
    intro = f"{first['name']} стоит {first['price_rub']} ₽."
    answer = {"response_type": "informational", "intro": intro, "wines": [], "closing": "Ещё вопрос?"}
    return reply(json.dumps({**answer, "guard_type": None}, ensure_ascii=False))


def _model(body: dict):
    """A deterministic model that answers from what its prompt gives: the table when there is one, else the
    first candidates."""
    prompt = body["messages"][1]["content"]
    return _answer_from_the_table(body) if "## Вина на столе" in prompt else _recommend_first_candidates(body)


def test_llm_mode_gets_the_table_in_its_prompt_and_no_new_search(monkeypatch, telegram, llm, fresh_memory):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE"))
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = _model
    deliver(bot, text_update(9031, "красное сухое к стейку"))
    shown = [_row(c) for c in _captions(telegram)]
    answer = _said(bot, telegram, text_update(9032, "сколько стоит первое?"))
    prompt = llm.chat_requests[-1]["messages"][1]["content"]
    assert "## Вина на столе" in prompt and "## Кандидаты" not in prompt, "the table, and no search for it"
    assert _norm(shown[0]["name"]) in _norm(answer) and str(shown[0]["price_rub"]) in answer


@pytest.mark.parametrize("mode", ["offline", "llm"])
def test_the_same_request_in_ten_fresh_chats_has_the_same_top_pick(mode, monkeypatch, telegram, llm, fresh_memory):
    unset = ("QUEUE_URL", "IDEMPOTENCY_TABLE") + (("OPENAI_API_KEY",) if mode == "offline" else ())
    configure_bot(monkeypatch, telegram, fresh_memory, unset=unset)
    bot = make_bot(fresh_memory, telegram, llm=llm if mode == "llm" else None, monkeypatch=monkeypatch)
    if mode == "llm":
        llm.script(*[_recommend_first_candidates] * 10)
    firsts = []
    for n in range(10):
        chat = 700_000 + n
        deliver(bot, text_update(9100 + n, "красное сухое к стейку до 3000", chat_id=chat))
        firsts.append(_row(_captions(telegram, chat)[0])["name"])
    top = max(set(firsts), key=firsts.count)
    assert firsts.count(top) >= 9, firsts
