"""The shop's duties end to end (issue 19): the age gate, the health warning, /privacy and /forget, wine deep
links and the admin commands — through the real webhook ingress, the router, the in-memory store and the fake
Bot API (which rejects what Telegram rejects). What the database itself keeps of a forgotten customer is
tests/integration/test_shop_ops.py's."""

from __future__ import annotations

import itertools

import pytest
from sommelier.settings import DEFAULT_HEALTH_WARNING
from sommelier.shop import age_gate, privacy
from sommelier.shop.cards import NOT_FOUND, SIMILAR_HEADER, SOLD_OUT
from sommelier.shop.deeplinks import wine_payload

from tests.bot_harness import configure_bot, deliver, make_bot, repositories_for, restart, rows_mentioning
from tests.fakes.telegram_updates import TEST_BOT, TEST_CHAT, text_update, user

GROUP = {"id": -100555, "type": "supergroup", "title": "Винный клуб"}
ADMIN_CHAT = -100999
_ids = itertools.count(70_000)


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory)
    monkeypatch.delenv("SOMMELIER_AGE_GATE")  # the default: on
    yield


@pytest.fixture
def bot(environment, fresh_memory, telegram):
    return make_bot(fresh_memory, telegram)


def say(bot, telegram, text, chat_id=TEST_CHAT, **extra):
    before = len(telegram.calls)
    deliver(bot, text_update(next(_ids), text, chat_id, **extra))
    return telegram.calls[before:]


def press(bot, telegram, data, *, from_id=TEST_CHAT, chat=None, message_id=None):
    chat = chat or {"id": from_id, "type": "private"}
    if message_id is None:
        message_id = telegram.sent_messages(chat["id"])[-1].result["message_id"]
    before = len(telegram.calls)
    update = {
        "update_id": next(_ids),
        "callback_query": {
            "id": f"cb{next(_ids)}",
            "from": user(from_id),
            "chat_instance": "1",
            "message": {"message_id": message_id, "date": 1763800000, "chat": chat},
            "data": data,
        },
    }
    deliver(bot, update)
    return telegram.calls[before:]


def texts(calls) -> list[str]:
    return [
        c.result.get("text") or c.result.get("caption") or ""
        for c in calls
        if c.method in ("sendMessage", "sendPhoto") and c.ok
    ]


def buttons(calls) -> list[str]:
    sent = [c for c in calls if c.method in ("sendMessage", "sendPhoto") and c.ok]
    markup = (sent[-1].params.get("reply_markup") or {}) if sent else {}
    return [b["text"] for row in markup.get("inline_keyboard", []) for b in row]


def toasts(calls) -> list[str | None]:
    return [c.params.get("text") for c in calls if c.method == "answerCallbackQuery"]


def test_a_new_chat_meets_the_age_gate_before_any_wine(bot, telegram, fresh_memory):
    calls = say(bot, telegram, "красное сухое к стейку до 2000")
    assert texts(calls) == [age_gate.QUESTION] and buttons(calls) == ["Да", "Нет"]
    assert not [c for c in calls if c.method == "sendPhoto"]
    assert rows_mentioning(fresh_memory, TEST_CHAT) == {}, "nothing is stored before the answer"

    calls = press(bot, telegram, f"age:0:{TEST_CHAT}")
    assert texts(calls) == [age_gate.REFUSAL]
    assert rows_mentioning(fresh_memory, TEST_CHAT) == {"age_answers.telegram_user_id": 1}, "only the answer is stored"

    calls = say(bot, telegram, "ну пожалуйста, игристое")
    assert texts(calls) == [age_gate.QUESTION], "no wine until the customer confirms"

    calls = press(bot, telegram, f"age:1:{TEST_CHAT}")
    assert toasts(calls) == [age_gate.THANKS]
    assert [c for c in calls if c.method == "editMessageReplyMarkup" and c.ok], (
        "the answered question loses its buttons"
    )
    assert texts(calls)[0].startswith("Здравствуйте"), "«Да» opens the welcome"

    calls = say(bot, telegram, "красное сухое к стейку до 2000")
    assert [c for c in calls if c.method == "sendPhoto"], "now wine is shown"
    closing = texts(calls)[-1]
    assert closing.endswith(DEFAULT_HEALTH_WARNING), "the closing message carries the health warning"
    assert [a.is_adult for a in fresh_memory.age_answers.values() if a.telegram_user_id == TEST_CHAT] == [True]


def test_a_button_pressed_before_the_answer_only_gets_a_toast(bot, telegram, fresh_memory):
    calls = press(bot, telegram, "fb:1:12345", message_id=1)
    assert toasts(calls) == [age_gate.ANSWER_FIRST] and texts(calls) == []
    assert rows_mentioning(fresh_memory, TEST_CHAT) == {}, "no vote is stored"


def test_help_and_start_work_before_the_answer(bot, telegram, fresh_memory):
    calls = say(bot, telegram, "/help")
    assert "Как со мной говорить" in texts(calls)[0] and age_gate.QUESTION not in texts(calls)
    assert "/privacy" in texts(calls)[0] and "/forget" in texts(calls)[0]
    calls = say(bot, telegram, "/start")
    assert texts(calls)[0].startswith("Здравствуйте") and texts(calls)[-1] == age_gate.QUESTION
    assert not [c for c in calls if c.method == "sendPhoto"]


def test_the_age_question_counts_against_the_rate_limit(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram, rate=2)
    answers = [texts(say(bot, telegram, f"вопрос {n}")) for n in range(4)]
    assert answers[:2] == [[age_gate.QUESTION]] * 2
    assert "быстро" in answers[2][0] and answers[3] == [], "one notice, then silence"


def test_the_gate_can_be_switched_off(bot, telegram, monkeypatch):
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")
    calls = say(restart(bot), telegram, "красное сухое к стейку до 2000")
    assert age_gate.QUESTION not in texts(calls) and [c for c in calls if c.method == "sendPhoto"]


def test_in_a_group_each_user_answers_for_themselves(bot, telegram, fresh_memory):
    anna, boris = 610001, 610002
    mention = f"@{TEST_BOT} красное к утке"
    entity = [{"type": "mention", "offset": 0, "length": len(TEST_BOT) + 1}]
    calls = say(bot, telegram, mention, chat_id=GROUP["id"], chat=GROUP, **{"from": user(anna)}, entities=entity)
    assert texts(calls) == [age_gate.QUESTION]
    question_id = telegram.sent_messages(GROUP["id"])[-1].result["message_id"]
    # Boris can't answer Anna's question.
    calls = press(bot, telegram, f"age:1:{anna}", from_id=boris, chat=GROUP, message_id=question_id)
    assert toasts(calls) == [age_gate.NOT_YOURS] and texts(calls) == []
    calls = press(bot, telegram, f"age:1:{anna}", from_id=anna, chat=GROUP, message_id=question_id)
    assert toasts(calls) == [age_gate.THANKS]
    calls = say(bot, telegram, mention, chat_id=GROUP["id"], chat=GROUP, **{"from": user(anna)}, entities=entity)
    assert [c for c in calls if c.method == "sendPhoto"]
    # Boris addresses the bot for the first time: his own question.
    calls = say(bot, telegram, mention, chat_id=GROUP["id"], chat=GROUP, **{"from": user(boris)}, entities=entity)
    assert texts(calls) == [age_gate.QUESTION] and f"age:1:{boris}" in str(calls[-1].params["reply_markup"])


def confirm(bot, telegram):
    say(bot, telegram, "привет")
    press(bot, telegram, f"age:1:{TEST_CHAT}")


def test_forget_asks_then_leaves_no_row_with_the_users_id(bot, telegram, fresh_memory):
    confirm(bot, telegram)
    say(bot, telegram, "красное сухое к стейку до 2000")
    rated = telegram.sent_messages(TEST_CHAT)[-1]
    answer_ref = rated.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    press(bot, telegram, answer_ref, message_id=rated.result["message_id"])
    assert sum(1 for v in fresh_memory.feedback.values() if v.user_id == TEST_CHAT) == 1

    calls = say(bot, telegram, "/forget")
    assert texts(calls) == [privacy.CONFIRM_QUESTION] and buttons(calls) == ["Да, удалить", "Отмена"]
    calls = press(bot, telegram, f"forget:0:{TEST_CHAT}")
    assert texts(calls) == [privacy.KEPT] and rows_mentioning(fresh_memory, TEST_CHAT)

    say(bot, telegram, "/forget")
    calls = press(bot, telegram, f"forget:1:{TEST_CHAT}")
    assert texts(calls) == [privacy.FORGOTTEN]
    assert rows_mentioning(fresh_memory, TEST_CHAT) == {}
    # Forgotten means forgotten: the age question comes back.
    assert texts(say(bot, telegram, "игристое")) == [age_gate.QUESTION]


def test_privacy_says_what_is_kept_and_for_how_long(bot, telegram, monkeypatch):
    monkeypatch.setenv("MESSAGE_RETENTION_DAYS", "90")
    text = texts(say(restart(bot), telegram, "/privacy"))[0]
    assert "90 дней" in text and "/forget" in text and "возраст" in text


def test_a_deep_link_shows_the_right_wine_after_the_age_question(bot, telegram, fresh_memory):
    first = min((w for w in fresh_memory.wines.values() if w.food_pairings), key=lambda w: (w.name, w.id))
    wine_id, name = first.id, first.name
    calls = say(bot, telegram, f"/start {wine_payload(wine_id)}")
    assert texts(calls)[-1] == age_gate.QUESTION
    calls = press(bot, telegram, f"age:1:{TEST_CHAT}:{wine_payload(wine_id)}")
    shown = texts(calls)
    photos = [c for c in calls if c.method == "sendPhoto" and c.ok]
    assert shown[0].startswith(name) and "К чему подать" in shown[0]
    assert photos and photos[0].result["caption"].startswith(name), "the card is the wine's photo"
    assert SIMILAR_HEADER in shown and len(photos) == 3, "the wine and two similar ones"
    assert shown[-1].endswith(DEFAULT_HEALTH_WARNING)
    # Once confirmed, the link opens the card at once.
    assert texts(say(bot, telegram, f"/start {wine_payload(wine_id)}"))[0].startswith(name)


def test_an_unknown_deep_link_gets_a_friendly_answer_and_alternatives(bot, telegram):
    confirm(bot, telegram)
    shown = texts(say(bot, telegram, "/start w_no-such-sku-123"))
    assert shown[0] == NOT_FOUND and len(shown) == 5  # the line, three alternatives, the closing


def test_a_shelf_code_with_a_sku_and_a_sold_out_wine(bot, telegram, fresh_memory):
    confirm(bot, telegram)
    shelved = min(fresh_memory.wines.values(), key=lambda w: (w.name, w.id))
    shelved.sku, name = "SHELF-42", shelved.name
    assert texts(say(bot, telegram, "/start w_SHELF-42"))[0].startswith(name)
    shelved.available = False
    shown = texts(say(bot, telegram, "/start w_SHELF-42"))
    assert shown[0] == SOLD_OUT.format(name=name) and len(shown) == 5
    assert all(not t.startswith(name) for t in shown[1:])


def test_a_shelf_code_with_the_shops_cyrillic_article(bot, telegram, fresh_memory):
    # A label printed for «ВЛ-0101 кр.» (the deep link carries it in base64url): the bot opens that wine.
    confirm(bot, telegram)
    shelved = min(fresh_memory.wines.values(), key=lambda w: (w.name, w.id))
    shelved.sku, name = "ВЛ-0101 кр.", shelved.name
    payload = wine_payload(shelved.sku)
    assert payload.startswith("wb_") and payload.isascii()
    assert texts(say(bot, telegram, f"/start {payload}"))[0].startswith(name)


def test_admin_commands_answer_only_in_the_admin_chat(bot, telegram, monkeypatch, fresh_memory):
    monkeypatch.setenv("ADMIN_CHAT_ID", str(ADMIN_CHAT))
    restart(bot)
    admin_group = {"id": ADMIN_CHAT, "type": "group", "title": "Магазин"}
    assert texts(say(bot, telegram, "/stats")) == [], "a customer's /stats answers nothing"
    assert texts(say(bot, telegram, "/report")) == []
    calls = say(bot, telegram, "/stats", chat_id=ADMIN_CHAT, chat=admin_group)
    assert texts(calls)[0].startswith("Сводка сомелье") and "вин в каталоге: 64" in texts(calls)[0]
    calls = say(bot, telegram, "/report", chat_id=ADMIN_CHAT, chat=admin_group)
    photos = [c for c in calls if c.method == "sendPhoto" and c.ok]
    assert photos and photos[0].meta.get("photo_source") == "upload"
    assert photos[0].files["photo"][:8] == b"\x89PNG\r\n\x1a\n"
    assert any(t.startswith("📊 Отчёт сомелье") for t in texts(calls))


def test_the_terminal_chat_skips_the_gate(environment, fresh_memory):
    from rich.console import Console
    from sommelier.app import build_runtime
    from sommelier.settings import load_settings
    from sommelier_dev.cli.chat_cmd import TerminalChat, terminal_update

    runtime = build_runtime(load_settings(), repositories=repositories_for(fresh_memory))
    chat = TerminalChat(runtime, 1, Console(file=open("/dev/null", "w")))
    reply = chat.reply_to(terminal_update(1, 1, "красное сухое к стейку до 2000"))
    assert any(p.kind == "photo" for p in reply.parts)


def test_unreadable_shop_settings_never_break_a_reply(bot, telegram, monkeypatch):
    monkeypatch.setenv("ADMIN_CHAT_ID", "the shop group")
    monkeypatch.setenv("MESSAGE_RETENTION_DAYS", "forever")
    assert texts(say(bot, telegram, "/stats")) == []  # admin commands are off, nothing raised
    assert "180 дней" in texts(say(bot, telegram, "/privacy"))[0]  # the default is stated


def test_the_update_corpus_with_the_age_gate_on(monkeypatch, telegram, fresh_memory, state_dir):
    """The 150+ real update shapes again, as a new customer meets them: every one still gets a 200, no Bot
    API call is refused, buttons only answer the callback, and silence stays silence."""
    from tests.e2e import test_update_corpus as corpus

    monkeypatch.setenv("SOMMELIER_AGE_GATE", "1")
    environment = corpus.environment.__wrapped__(monkeypatch, telegram, fresh_memory, state_dir)
    next(environment)
    try:
        corpus.test_every_update_of_the_corpus(None, fresh_memory, telegram)
    finally:
        next(environment, None)
    asked = [c for c in telegram.calls_of("sendMessage") if c.ok and c.result.get("text") == age_gate.QUESTION]
    assert asked, "the gate was on: new customers were asked"
    assert not [c for c in telegram.calls_of("sendPhoto") if c.ok], "and no wine was shown"
