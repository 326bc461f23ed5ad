"""The catalogue speaks: one-mistake models (tests/fakes/mistake_models.py) through the whole bot, and what the
customer reads is checked on the fake Bot API's records: the texts and captions it was sent.

Each model answers well but for one mistake real models make in grounded answers: a made-up price or vintage,
another wine's notes under a wine's reference, stock, discount and promo-code claims, links, a competitor, text
copied up to a prompt row's «…» cut, an instruction planted in a catalogue row obeyed. Whole (LLM_STREAM=false:
the answer is rendered at once, as `sommelier chat --once` does) and streamed (the serve path: each card goes
out as soon as it is complete). The seeds vary the request, the wines picked, the invented values and the shape
of the answer (today's too), so no check is tuned to one example.

The oracle is written from the data by hand: the mistaken phrases the model wrote, the catalogue rows of the
store; it shares no code with the checks it tests.
"""

from __future__ import annotations

import dataclasses
import html
import re

import pytest

from tests.bot_harness import make_bot
from tests.fakes.mistake_models import MISTAKES, MistakeModel, planted_note
from tests.fakes.telegram_updates import TEST_CHAT, text_update

REQUESTS = (
    "красное сухое к стейку до 3000",
    "белое вино к рыбе",
    "посоветуйте красное вино на ужин с друзьями",
)
TAGS = re.compile(r"<[^>]+>")


def _plain(call) -> str:
    return html.unescape(TAGS.sub("", call.params.get("text") or call.params.get("caption") or ""))


def _has_number(text: str, number: int) -> bool:
    """The number as written on its own (not the tail of «1 990»)."""
    return re.search(rf"(?<![\d])(?<!\d[ \u00a0\u202f]){number}(?![\d])", text) is not None


def _cards(texts: list[str], store) -> dict[str, tuple[str, object]]:
    """The wine cards among the sent texts, by their header line, with the catalogue row it names
    («Name — Producer, 2021» and the price on the second line)."""
    rows = sorted(store.wines.values(), key=lambda r: len(r.name) + len(r.producer), reverse=True)
    cards = {}
    for text in texts:
        lines = text.split("\n")
        for row in rows:
            year = str(row.vintage_year) if row.vintage_year else "NV"
            if (
                lines[0] == f"{row.name} — {row.producer}, {year}"
                and len(lines) > 1
                and _price(row.price_rub) in lines[1]
            ):
                cards[lines[0]] = (text, row)
                break
    return cards


def _price(number) -> str:
    return f"{int(number):,}".replace(",", "\u202f") + "\u202f₽"


def _plant(store, seed: int) -> tuple[str, int, str]:
    """An instruction in one red wine's tasting notes (the shop's own row); -> its name, price asked, domain."""
    note, domain, price = planted_note(seed)
    reds = sorted((r for r in store.wines.values() if r.wine_type == "red" and r.available), key=lambda r: r.price_rub)
    row = reds[seed % len(reds)]
    store.wines[row.id] = dataclasses.replace(row, tasting_notes=f"{note} {row.tasting_notes}")
    return row.name, price, domain


@pytest.fixture(params=["whole", "streamed"])
def mode(request):
    return request.param


def _bot(fresh_memory, telegram, llm, monkeypatch, mode):
    monkeypatch.setenv("TELEGRAM_DRAFT_INTERVAL_MS", "0")
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("LLM_STREAM", "true" if mode == "streamed" else "false")
    return make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mistake", MISTAKES)
def test_the_customer_reads_only_what_the_catalogue_holds(
    fresh_memory, telegram, llm, monkeypatch, mode, mistake, seed
):
    planted = _plant(fresh_memory, seed) if mistake == "planted" else None
    request = "посоветуйте красное вино до 5000" if planted else REQUESTS[seed % len(REQUESTS)]
    model = MistakeModel(mistake, seed=seed, persistent=seed != 1, stream=mode == "streamed")
    model.look_for = planted[0] if planted else None
    llm.default = model
    bot = _bot(fresh_memory, telegram, llm, monkeypatch, mode)
    bot.process(text_update(7700 + seed, request))

    texts = [_plain(c) for c in telegram.sent_messages(TEST_CHAT)]
    drafts = [_plain(c) for c in telegram.drafts(TEST_CHAT)]  # what a private chat showed while it streamed
    joined = "\n".join(texts + drafts)
    assert texts, "the customer got an answer"
    cards = _cards(texts, fresh_memory)
    assert cards, f"a grounded answer shows wines, each under its catalogue name, producer, vintage, price: {texts}"
    for card, _row in cards.values():
        assert not card.rstrip().endswith(","), "no card ends cut"
    assert model.said, "the model made its mistake"
    lowered = joined.lower()
    if mistake in ("price", "vintage"):
        number = int(model.said[0])
        assert not _has_number(joined, number), (number, texts)
    elif mistake == "other_notes":
        for phrase in model.said:
            assert phrase.lower() not in _reasons(cards).lower(), (phrase, texts)
    elif mistake == "cut_copy":
        tail = model.said[0]
        assert f"{tail}…" not in joined, texts
        assert not re.search(r"\w…\s*$", joined.split("\n\n")[0]), texts
    elif mistake == "planted":
        assert model.obeyed, "the planted instruction reached the model as catalogue data"
        name, price, domain = planted
        assert domain not in joined and "важно для" not in lowered, texts
        assert not re.search(rf"(?<![\d\u202f ]){price}[\u202f ]?₽", joined), texts
    else:
        for phrase in model.said:
            assert phrase.lower() not in lowered, (phrase, texts)


def _reasons(cards: dict[str, tuple[str, object]]) -> str:
    """What the cards say beyond the catalogue's own text of their wine: the model's reasons."""
    out = []
    for card, row in cards.values():
        body = card.split("\n\n", 1)[1] if "\n\n" in card else ""
        for own in (row.tasting_notes, row.description, ", ".join(row.grape_varieties)):
            for sentence in re.split(r"(?<=[.!?])\s+", own or ""):
                if sentence:
                    body = body.replace(sentence.strip(), " ")
        out.append(body)
    return "\n".join(out)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_later_failing_wine_never_takes_back_a_card_already_sent(fresh_memory, telegram, llm, monkeypatch, seed):
    """Streamed: the first card goes out as soon as its reference and reason are complete; the second wine
    fails its checks; nothing is taken back, nothing is sent twice, and the failing text never shows."""
    model = MistakeModel("other_notes", seed=seed, persistent=True, stream=True)
    llm.default = model
    bot = _bot(fresh_memory, telegram, llm, monkeypatch, "streamed")
    bot.process(text_update(7800 + seed, REQUESTS[0]))
    texts = [_plain(c) for c in telegram.sent_messages(TEST_CHAT)]
    assert len(texts) == len(set(texts)), "no message went twice"
    cards = _cards(texts, fresh_memory)
    assert cards
    deleted = [c for c in telegram.calls if c.method in ("deleteMessage", "editMessageText", "editMessageCaption")]
    assert not deleted, "what was sent stays"
