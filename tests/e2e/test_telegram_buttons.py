"""Buttons with state, end to end (webhook → consumer → PostgreSQL → fake Bot API), offline responder.

One vote per (user, answer) and changeable; «Ещё варианты» never repeats a wine and says once when
nothing is left; old buttons (after /reset, inaccessible messages, inline messages) never reach the agent.
"""

from __future__ import annotations

import pytest
from sommelier.telegram.dialog import NOTHING_MORE, NOTHING_MORE_TOAST, OLD_ANSWER
from sommelier.telegram.router import OLD_BUTTON

from tests.bot_harness import configure_bot, deliver, make_bot
from tests.fakes.telegram_updates import TEST_CHAT, private_chat, text_update, user


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"))
    yield


class Chat:
    """A private chat: send text, press the buttons under the last answer."""

    def __init__(self, bot, telegram):
        self.bot, self.telegram = bot, telegram
        self.next_id = 100

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def say(self, text: str) -> None:
        deliver(self.bot, text_update(self._id(), text))

    def last_keyboard(self):
        for call in reversed(self.telegram.sent_messages(TEST_CHAT)):
            markup = call.params.get("reply_markup")
            if markup:
                return call.result["message_id"], markup["inline_keyboard"]
        return None, None

    def press(self, label: str, *, message_id: int | None = None, keyboard=None, **message_extra) -> str | None:
        """Press a button; returns the toast (answerCallbackQuery text)."""
        found_id, found_keyboard = self.last_keyboard()
        message_id, keyboard = message_id or found_id, keyboard or found_keyboard
        data = next(b["callback_data"] for row in keyboard for b in row if b["text"].startswith(label))
        update_id = self._id()
        message = {"message_id": message_id, "date": 1763800000, "chat": private_chat(), **message_extra}
        deliver(
            self.bot,
            {
                "update_id": update_id,
                "callback_query": {
                    "id": f"cb-{update_id}",
                    "from": user(),
                    "chat_instance": "42",
                    "message": message,
                    "data": data,
                },
            },
        )
        answers = [
            c
            for c in self.telegram.calls_of("answerCallbackQuery")
            if c.params["callback_query_id"] == f"cb-{update_id}"
        ]
        return answers[-1].params.get("text") if answers else None

    def captions(self) -> list[str]:
        return [c.params["caption"] for c in self.telegram.sent_messages(TEST_CHAT) if c.method == "sendPhoto"]

    def texts(self) -> list[str]:
        return [c.params.get("text") or c.params.get("caption") or "" for c in self.telegram.sent_messages(TEST_CHAT)]


@pytest.fixture
def chat(environment, fresh_memory, telegram):
    return Chat(make_bot(fresh_memory, telegram, rate=1000), telegram)


def test_buttons_only_under_a_recommendation(chat):
    chat.say("что такое танины?")
    assert chat.last_keyboard() == (None, None)
    chat.say("спасибо")
    assert chat.last_keyboard() == (None, None)
    chat.say("красное сухое к стейку до 3000")
    _, keyboard = chat.last_keyboard()
    assert [b["text"] for row in keyboard for b in row] == ["👍", "👎", "Ещё варианты"]


def test_one_vote_per_answer_the_last_press_wins(chat, fresh_memory):
    chat.say("красное сухое к стейку до 3000")
    message_id, keyboard = chat.last_keyboard()
    assert chat.press("👍") == "Спасибо! Рад, что понравилось 🍷"
    assert chat.press("👍", message_id=message_id, keyboard=keyboard) == "Вы уже поставили 👍"
    assert "изменена" in chat.press("👎", message_id=message_id, keyboard=keyboard)
    rows = [(v.rating, v.previous_rating, v.presses) for v in fresh_memory.feedback.values() if v.user_id == TEST_CHAT]
    assert rows == [(-1, 1, 3)]  # one row; it says the vote was changed
    edits = chat.telegram.calls_of("editMessageReplyMarkup")
    shown = [[b["text"] for b in e.params["reply_markup"]["inline_keyboard"][0]] for e in edits]
    assert shown[0] == ["👍 ✓", "👎"] and shown[-1] == ["👍", "👎 ✓"]


def test_more_never_repeats_a_wine_and_says_once_when_nothing_is_left(chat):
    chat.say("игристое розовое до 1500")
    pressed_on = chat.last_keyboard()
    seen = list(chat.captions())
    for _ in range(12):
        before = len(chat.texts())
        toast = chat.press("Ещё варианты")
        new = chat.texts()[before:]
        if NOTHING_MORE in new:
            break
        assert toast == "Ищу другие варианты…"
        seen += chat.captions()[len(seen) :]
        pressed_on = chat.last_keyboard()
    else:
        pytest.fail("«Ещё варианты» never ran out")
    assert len(seen) == len(set(seen)), "a wine was shown twice in the chat"
    assert chat.texts().count(NOTHING_MORE) == 1
    assert "Давайте изменим условия" in NOTHING_MORE  # offers to change the criteria
    # The button that ran out loses «Ещё варианты»; pressing the old one again is only a toast.
    last_edit = chat.telegram.calls_of("editMessageReplyMarkup")[-1].params["reply_markup"]["inline_keyboard"]
    assert all(b["text"] != "Ещё варианты" for row in last_edit for b in row)
    before = len(chat.texts())
    message_id, keyboard = pressed_on
    assert chat.press("Ещё варианты", message_id=message_id, keyboard=keyboard) == NOTHING_MORE_TOAST
    assert chat.texts()[before:] == []


def test_an_old_button_after_reset_is_answered_politely_without_the_agent(chat):
    chat.say("красное сухое к стейку до 3000")
    message_id, keyboard = chat.last_keyboard()
    chat.say("/reset")
    before = len(chat.texts())
    actions = len(chat.telegram.calls_of("sendChatAction"))
    assert chat.press("Ещё варианты", message_id=message_id, keyboard=keyboard) == OLD_ANSWER
    assert chat.texts()[before:] == []  # no «Держите ещё три вина: вино.»
    assert len(chat.telegram.calls_of("sendChatAction")) == actions  # the agent was not even started


def test_a_button_on_an_inaccessible_message_only_answers_the_callback(chat):
    chat.say("красное сухое к стейку до 3000")
    before_texts, before_edits = len(chat.texts()), len(chat.telegram.calls_of("editMessageReplyMarkup"))
    toast = chat.press("👍", date=0)  # InaccessibleMessage: date 0, nothing else but the chat and id
    assert toast == OLD_BUTTON
    assert chat.texts()[before_texts:] == []
    assert len(chat.telegram.calls_of("editMessageReplyMarkup")) == before_edits


def test_an_inline_message_callback_only_answers_the_callback(chat, fresh_memory):
    before = len(chat.telegram.calls)
    deliver(
        chat.bot,
        {
            "update_id": 999,
            "callback_query": {
                "id": "inline-1",
                "from": user(),
                "inline_message_id": "AgAAAEkDAQBvdXNlcg",
                "chat_instance": "-77",
                "data": "more:12",
            },
        },
    )
    calls = chat.telegram.calls[before:]
    assert [c.method for c in calls] == ["answerCallbackQuery"]
    assert fresh_memory.messages == {}  # no turn ran


MALFORMED_OR_FOREIGN = [
    "buy:42",
    "fb:2:5",
    "fb:1:",
    "fb:1:a:b",
    "more:",
    "age:1:x",
    "age:2:1",
    "forget:yes:1",
    ":",
    "✓",
]


def test_buttons_as_old_messages_carry_them_still_work_and_anything_else_gets_a_polite_toast(chat):
    """Callback data as the bot has always written it (a message weeks old keeps its buttons), then data no
    button of this bot carries: a toast in Russian each time, no message, no failure."""
    chat.say("красное сухое к стейку до 3000")
    message_id, keyboard = chat.last_keyboard()
    ref = keyboard[0][0]["callback_data"].rpartition(":")[2]

    def press(data: str) -> str | None:
        return chat.press("old", message_id=message_id, keyboard=[[{"text": "old", "callback_data": data}]])

    assert press(f"fb:1:{ref}") == "Спасибо! Рад, что понравилось 🍷"
    assert "изменена" in press(f"fb:-1:{ref}")
    assert press(f"more:{ref}") == "Ищу другие варианты…"
    before = len(chat.texts())
    toasts = {data: press(data) for data in MALFORMED_OR_FOREIGN}
    assert toasts == dict.fromkeys(MALFORMED_OR_FOREIGN, "Эта кнопка устарела")
    assert chat.texts()[before:] == []
    assert press(f"forget:1:{TEST_CHAT + 1}") == "Эта кнопка для другого собеседника 🙂"  # someone else's
