"""render.py: the answer-to-messages mapping (docs/architecture.md §10), Telegram limits (UTF-16, after entity parsing), escaping.

Every rendered part is also sent through the fake Bot API (strict HTML parser, real limits).
"""

from __future__ import annotations

import uuid

import pytest
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.wine import Wine
from sommelier.telegram.callback_data import LIMIT as CALLBACK_DATA_LIMIT
from sommelier.telegram.client import TelegramClient
from sommelier.telegram.render import (
    CAPTION_LIMIT,
    MORE,
    TEXT_LIMIT,
    VOTE,
    MoreWines,
    Outgoing,
    Vote,
    feedback_keyboard,
    price_label,
    render_answer,
    render_text,
    shorten,
    split_text,
    utf16_len,
)

from tests.fakes.telegram_server import FakeTelegram, parse_html
from tests.wines import as_wine

CHAT = 5151
REF = "a1b2c3d4e5f60718293a4b5c6d7e8f90"  # 32 chars, like a uuid hex
NNBSP = "\u202f"


def wine(name="Malbec", *, image_key="photos/malbec.png", file_id=None, **extra) -> Wine:
    data = {
        "id": str(uuid.uuid4()),
        "name": name,
        "producer": "Luigi Bosca",
        "vintage_year": 2022,
        "region": "Мендоса, Аргентина",
        "price_rub": 2490,
        "image_key": image_key,
        "telegram_file_id": file_id,
    }
    data.update(extra)
    return as_wine(data)


def answer(
    wines: list[tuple[Wine, str]], intro="Вот что я нашёл:", closing="Подобрать что-то ещё?"
) -> SommelierResponse:
    return SommelierResponse(
        response_type="recommendation" if wines else "informational",
        intro=intro,
        wines=[WineRecommendation(wine_name=w.name, wine_id=w.id, description=d) for w, d in wines],
        closing=closing,
    )


@pytest.fixture(scope="module")
def fake():
    with FakeTelegram() as tg:
        yield tg


@pytest.fixture(scope="module")
def client(fake):
    with TelegramClient(fake.token, fake.base_url) as c:
        yield c


def send_all(client: TelegramClient, parts: list[Outgoing]) -> list:
    """Send every part as the bot would (photos by URL) and return the Messages."""
    out = []
    for p in parts:
        if p.kind == "photo":
            out.append(
                client.send_photo(
                    CHAT, "https://img.example/wine.png", caption=p.html, parse_mode="HTML", reply_markup=p.reply_markup
                )
            )
        else:
            out.append(client.send_message(CHAT, p.html, parse_mode="HTML", reply_markup=p.reply_markup))
    return out


def check_consistent(part: Outgoing) -> None:
    """plain is exactly what Telegram shows for html, and within the limits."""
    parsed, _ = parse_html(part.html)
    assert parsed == part.plain
    limit = CAPTION_LIMIT if part.kind == "photo" else TEXT_LIMIT
    assert 0 < utf16_len(part.plain) <= limit


# --------------------------------------------------------------------------- #
def test_price_label():
    assert price_label(1799) == f"1{NNBSP}799{NNBSP}₽"
    assert price_label(950) == f"950{NNBSP}₽"
    assert price_label(1_250_000) == f"1{NNBSP}250{NNBSP}000{NNBSP}₽"
    assert price_label(1799.0) == price_label(1799)
    assert price_label(1799.5) == f"1{NNBSP}799,50{NNBSP}₽"


def test_full_answer_mapping(fake, client):
    w1, w2, w3 = (
        wine("Malbec"),
        wine("Chablis", image_key=None, file_id="AgACcached"),
        wine("Rkatsiteli", image_key=None, vintage_year=None, price_rub=1799, region="Кахетия, Грузия"),
    )
    resp = answer([(w1, "Сочный и бархатистый."), (w2, "Минеральное."), (w3, "Без фото.")])
    parts = render_answer(resp, {w.id: w for w in (w1, w2, w3)}, REF)

    assert [p.kind for p in parts] == ["text", "photo", "photo", "text", "text"]
    intro, p1, p2, p3, closing = parts
    assert intro.plain == "Вот что я нашёл:" and intro.reply_markup is None
    assert p1.html == (
        f"<b>Malbec</b> — Luigi Bosca, 2022\nМендоса, Аргентина · 2{NNBSP}490{NNBSP}₽\n\nСочный и бархатистый."
    )
    assert p1.plain == (
        f"Malbec — Luigi Bosca, 2022\nМендоса, Аргентина · 2{NNBSP}490{NNBSP}₽\n\nСочный и бархатистый."
    )
    assert (p1.wine_id, p1.image_key, p1.file_id) == (w1.id, "photos/malbec.png", None)
    assert (p2.file_id, p2.image_key) == ("AgACcached", None)
    assert p3.wine_id == w3.id and "Rkatsiteli — Luigi Bosca, NV" in p3.plain
    assert f"Кахетия, Грузия · 1{NNBSP}799{NNBSP}₽" in p3.plain
    assert closing.plain == "Подобрать что-то ещё?"
    assert closing.reply_markup == {
        "inline_keyboard": [
            [{"text": "👍", "callback_data": f"fb:1:{REF}"}, {"text": "👎", "callback_data": f"fb:-1:{REF}"}],
            [{"text": "Ещё варианты", "callback_data": f"more:{REF}"}],
        ]
    }
    for p in parts[:-1]:
        assert p.reply_markup is None
    for p in parts:
        check_consistent(p)

    fake.reset()
    msgs = send_all(client, parts)
    assert msgs[1].caption == p1.plain  # Telegram shows exactly our plain text
    assert msgs[-1].reply_markup == closing.reply_markup


def test_missing_wine_is_skipped_and_name_lookup_works():
    w1, w2 = wine("Malbec"), wine("Pinot Noir")
    resp = SommelierResponse(
        response_type="recommendation",
        intro="Вот:",
        wines=[
            WineRecommendation(wine_name="Malbec", wine_id=None, description="По имени."),
            WineRecommendation(wine_name="Ghost", wine_id=str(uuid.uuid4()), description="Нет в каталоге."),
            WineRecommendation(wine_name="Pinot Noir", wine_id=w2.id, description="По id."),
        ],
        closing="Ещё?",
    )
    parts = render_answer(resp, {w1.id: w1, w2.id: w2}, REF)
    assert [p.wine_id for p in parts] == [None, w1.id, w2.id, None]
    assert "Нет в каталоге" not in "".join(p.plain for p in parts)


def test_informational_answer_has_no_wines_and_no_buttons():
    resp = answer([], intro="Танины — это...", closing="Ещё вопросы?")
    parts = render_answer(resp, {}, REF)
    assert [p.kind for p in parts] == ["text", "text"]
    assert all(p.reply_markup is None for p in parts)  # nothing to rate or to continue


@pytest.mark.parametrize("response_type", ["informational", "off_topic"])
def test_feedback_buttons_only_under_recommendations(response_type):
    w = wine("Кьянти")
    resp = answer([(w, "Вишня и табак.")])
    assert render_answer(resp, {w.id: w}, REF)[-1].reply_markup == feedback_keyboard(REF)
    other = resp.model_copy(update={"response_type": response_type})
    assert all(p.reply_markup is None for p in render_answer(other, {w.id: w}, REF))


def test_the_stored_vote_is_marked_and_more_can_be_left_out():
    marked = feedback_keyboard(REF, chosen=-1)
    assert [b["text"] for b in marked["inline_keyboard"][0]] == ["👍", "👎 ✓"]
    assert [b["callback_data"] for b in marked["inline_keyboard"][0]] == [f"fb:1:{REF}", f"fb:-1:{REF}"]
    assert len(feedback_keyboard(REF, more=False)["inline_keyboard"]) == 1


def test_hostile_model_text_is_escaped(fake, client):
    w = wine('Vin <b>"Rouge"</b> & Co', producer="Château <Margaux> & Fils", region="Бордо & Co, Франция")
    desc = 'Попробуйте <script>alert(1)</script> & **жирный** текст, <b>не тег</b>, 5 < 7 > 3, &amp; &lt; "кавычки".'
    resp = answer([(w, desc)], intro="<i>Привет</i> & **добро** пожаловать", closing="Ещё? <a href='x'>клик</a>")
    parts = render_answer(resp, {w.id: w}, REF)
    for p in parts:
        check_consistent(p)
    assert "<script>" not in parts[1].html and "&lt;script&gt;" in parts[1].html
    assert parts[1].html.count("<b>") == 1  # only our own bold name

    fake.reset()
    msgs = send_all(client, parts)
    assert msgs[0].text == "<i>Привет</i> & **добро** пожаловать"  # literal, no entities
    assert desc in msgs[1].caption
    assert msgs[1].caption.startswith('Vin <b>"Rouge"</b> & Co — Château <Margaux> & Fils, 2022')
    assert msgs[2].text == "Ещё? <a href='x'>клик</a>"
    calls = fake.sent_messages(CHAT)
    # The only entity Telegram found is our bold wine name.
    ents = calls[1].result.get("caption_entities")
    assert ents == [{"offset": 0, "length": utf16_len('Vin <b>"Rouge"</b> & Co'), "type": "bold"}]
    assert "entities" not in calls[0].result and "entities" not in calls[2].result


def long_russian(n_sentences: int, emoji: bool = False) -> str:
    base = "Это вино с ароматом спелой вишни, фиалки и табака & лёгкой <дубовой> ноткой"
    out = []
    for i in range(n_sentences):
        out.append(f"{base} {'🍷🍇' if emoji else ''}номер {i}.")
    return " ".join(out)


def test_caption_limit_with_long_russian_text_and_emoji(fake, client):
    # The model caps descriptions at 800 chars, but catalogue fields can be long too; force the limit
    # with a long region + name and a description full of astral emoji (2 UTF-16 units each).
    desc = long_russian(9, emoji=True)[:800].rstrip()
    w = wine("Очень длинное имя вина 🍷 " * 8, region="Регион " * 40 + ", Страна", producer="Производитель & сыновья")
    resp = answer([(w, desc)])
    parts = render_answer(resp, {w.id: w}, REF)
    photo = parts[1]
    assert photo.kind == "photo"
    check_consistent(photo)
    assert utf16_len(photo.plain) > len(photo.plain)  # emoji counted twice
    assert photo.plain.endswith("…")
    assert "&" not in photo.html.replace("&amp;", "").replace("&lt;", "").replace("&gt;", "")

    fake.reset()
    send_all(client, parts)  # the fake enforces 1024 UTF-16 units after HTML parsing


def test_caption_shortened_at_sentence_boundary_and_exact_budget():
    sentence = "Бархатистое вино с нотами сливы. "
    desc = (sentence * 30).strip()[:800]
    w = wine("X" * 250, region="Y" * 290)
    part = render_answer(answer([(w, desc)]), {w.id: w}, REF)[1]
    assert utf16_len(part.plain) <= CAPTION_LIMIT
    body = part.plain.split("\n\n", 1)[1]
    assert body.endswith("сливы…")  # cut after a full sentence, the full stop replaced by "…"
    assert "  " not in body


def test_shorten_word_boundary_never_cuts_an_entity():
    text = "&&&& " * 100  # each "&" becomes "&amp;" in HTML
    short = shorten(text, 101)
    assert utf16_len(short) <= 101 and short.endswith("…")
    assert short[:-1].rstrip() == short[:-1]
    # An emoji straddling the limit is not split into half a surrogate pair.
    emoji = "🍷" * 100
    cut = shorten(emoji, 51)
    assert utf16_len(cut) <= 51 and set(cut[:-1]) == {"🍷"}


def test_long_intro_splits_into_messages(fake, client):
    paragraph = long_russian(12)  # ~1100 chars
    intro = "\n\n".join([paragraph] * 5)[:5200]
    assert len(intro) >= 5000
    # The model caps intro at 1000 chars; model_construct skips validation to test the renderer's own limit.
    resp = SommelierResponse.model_construct(
        response_type="informational", intro=intro, wines=[], closing="Ещё?", guard_type=None
    )
    parts = render_answer(resp, {}, REF)[:-1]  # without the closing
    assert len(parts) >= 2
    assert render_text(intro) == parts
    parts[-1].reply_markup = feedback_keyboard(REF)
    for p in parts:
        check_consistent(p)
        assert utf16_len(p.plain) <= TEXT_LIMIT
    assert all(p.reply_markup is None for p in parts[:-1]) and parts[-1].reply_markup is not None
    # Nothing lost: the chunks joined back give the original words.
    assert " ".join(" ".join(p.plain for p in parts).split()) == " ".join(intro.split())
    # Split at a paragraph or sentence boundary, not mid-word.
    for p in parts[:-1]:
        assert p.plain.endswith(".")

    fake.reset()
    msgs = send_all(client, parts)
    assert len(msgs) == len(parts)


def test_split_text_emoji_counts_utf16(fake, client):
    text = ("🍷" * 3000) + " " + ("я" * 10)  # 6000 UTF-16 units in the first word alone
    chunks = split_text(text)
    assert len(chunks) >= 2
    assert all(utf16_len(c) <= TEXT_LIMIT for c in chunks)
    assert "".join(chunks).replace(" ", "") == text.replace(" ", "")
    fake.reset()
    send_all(client, render_text(text))


def test_split_prefers_paragraphs():
    a, b = "А" * 3000, "Б" * 3000
    assert split_text(f"{a}\n\n{b}") == [a, b]
    assert split_text("short") == ["short"]
    assert split_text("   ") == []


def test_no_photo_wine_is_text_with_full_description(fake, client):
    w = wine("Saperavi", image_key=None, file_id=None)
    desc = long_russian(7)[:800]
    parts = render_answer(answer([(w, desc)]), {w.id: w}, REF)
    assert parts[1].kind == "text" and parts[1].wine_id == w.id
    assert parts[1].plain.endswith(desc.strip())
    check_consistent(parts[1])
    fake.reset()
    send_all(client, parts)


def test_callback_data_limits():
    kb = feedback_keyboard("x" * 58)  # "fb:-1:" + 58 = 64 bytes: the longest allowed
    for row in kb["inline_keyboard"]:
        for button in row:
            assert len(button["callback_data"].encode()) <= CALLBACK_DATA_LIMIT
    with pytest.raises(ValueError):
        feedback_keyboard("x" * 59)
    with pytest.raises(ValueError):
        feedback_keyboard("я" * 30)  # 60 bytes in UTF-8
    with pytest.raises(ValueError):
        feedback_keyboard("")
    w = wine("Кьянти")
    with pytest.raises(ValueError):
        render_answer(answer([(w, "Вишня.")]), {w.id: w}, "y" * 80)


def test_parse_callback_data_roundtrip():
    kb = feedback_keyboard(REF)["inline_keyboard"]
    up, down, more = kb[0][0]["callback_data"], kb[0][1]["callback_data"], kb[1][0]["callback_data"]
    assert (up, down, more) == (f"fb:1:{REF}", f"fb:-1:{REF}", f"more:{REF}")  # the buttons already in chats
    assert VOTE.unpack(up) == Vote(1, REF) and VOTE.unpack(down) == Vote(-1, REF)
    assert MORE.unpack(more) == MoreWines(REF) and VOTE.unpack(more) is None and MORE.unpack(up) is None
    for junk in (None, "", "fb:2:x", "fb:1:", "more:", "other:1", "fb:1:a:b", "fb:+1:x", "more:a:b"):
        assert VOTE.unpack(junk) is None and MORE.unpack(junk) is None


def test_render_text_escapes_and_keeps_keyboard(fake, client):
    parts = render_text("Привет! Я <сомелье> & помогу 🍷", reply_markup=feedback_keyboard(REF))
    assert len(parts) == 1 and parts[0].html == "Привет! Я &lt;сомелье&gt; &amp; помогу 🍷"
    fake.reset()
    msg = send_all(client, parts)[0]
    assert msg.text == "Привет! Я <сомелье> & помогу 🍷"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("до 3 000 ₽ — есть", "до 3\u202f000\u202f₽ — есть"),
        ("от 12 490 ₽ до 1\u00a0500 руб.", "от 12\u202f490\u202f₽ до 1\u202f500\u202fруб."),
        ("цены 1 000–2 000 ₽", "цены 1\u202f000–2\u202f000\u202f₽"),
        ("в 2020 году 3 бутылки", "в 2020 году 3 бутылки"),  # no price, nothing joined
    ],
)
def test_prices_in_free_text_never_break(text, expected):
    from sommelier.telegram.render import keep_prices_together

    assert keep_prices_together(text) == expected
    assert render_text(text)[0].plain == expected
