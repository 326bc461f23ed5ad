"""Nobody speaks in the shop's name (issue 39): Business chats only for the shop's own accounts, admin
commands only in the admin chat itself, and the owner's reports without customers' personal data. Through
the real webhook ingress, the router, the in-memory store and the fake Bot API; what is asserted is what
each chat was sent."""

from __future__ import annotations

import itertools

import pytest
from sommelier.telegram.business import STRANGER_REFUSAL

from tests.bot_harness import configure_bot, deliver, make_bot
from tests.fakes.telegram_updates import text_update

SHOP_OWNER = 290011223  # the shop's own Business account (BUSINESS_OWNER_IDS)
STRANGER = 731234567  # someone else's Business account
ADMIN = 5120000001  # the shop's admin chat: the owner's private chat with the bot
CUSTOMER = 6011223344
_ids = itertools.count(90_000)


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"))
    monkeypatch.setenv("BUSINESS_OWNER_IDS", str(SHOP_OWNER))
    monkeypatch.setenv("ADMIN_CHAT_ID", str(ADMIN))
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")


def business_message(connection: str, text: str, *, chat: int = CUSTOMER, sender: int | None = None) -> dict:
    update_id = next(_ids)
    message = {
        "business_connection_id": connection,
        "message_id": update_id,
        "from": {"id": sender or chat, "is_bot": False, "first_name": "Дмитрий"},
        "chat": {"id": chat, "type": "private", "first_name": "Дмитрий"},
        "date": 1787910000,
        "text": text,
    }
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return {"update_id": update_id, "business_message": message}


def texts_to(telegram, chat: int) -> list[str]:
    return [c.params.get("text") or c.params.get("caption") or "" for c in telegram.sent_messages(chat)]


def test_a_strangers_business_account_is_refused_politely_once_and_the_owner_hears_of_it_once(
    environment, fresh_memory, telegram
):
    connection = telegram.connect_business("stranger-1", STRANGER, can_reply=True)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, {"update_id": next(_ids), "business_connection": connection})
    # Its customers get nothing: not the age question, not a wine, not a "typing…".
    deliver(bot, business_message("stranger-1", "красное сухое к стейку до 3000"))
    deliver(bot, business_message("stranger-1", "/start"))
    assert [c for c in telegram.calls if c.params.get("chat_id") == CUSTOMER] == []
    # The account's owner is told once, in their own chat with the bot, where the bot can be used.
    assert texts_to(telegram, STRANGER) == [STRANGER_REFUSAL]
    # The shop's admin chat is told once, with the account's id (to add it if it is the shop's own).
    told = texts_to(telegram, ADMIN)
    assert len(told) == 1 and str(STRANGER) in told[0] and "BUSINESS_OWNER_IDS" in told[0]
    # The same connection again (its rights changed): no second refusal, no second report.
    deliver(bot, {"update_id": next(_ids), "business_connection": connection})
    assert texts_to(telegram, STRANGER) == [STRANGER_REFUSAL] and len(texts_to(telegram, ADMIN)) == 1


def test_a_strangers_business_message_seen_first_is_refused_the_same_way(environment, fresh_memory, telegram):
    """Another process never saw the business_connection update: the message's connection is looked up."""
    telegram.connect_business("stranger-2", STRANGER, can_reply=True)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, business_message("stranger-2", "что есть к утке?"))
    assert [c for c in telegram.calls if c.params.get("chat_id") == CUSTOMER] == []
    assert texts_to(telegram, STRANGER) == [STRANGER_REFUSAL] and len(texts_to(telegram, ADMIN)) == 1


def test_with_no_business_owner_ids_no_business_chat_is_answered(environment, fresh_memory, telegram, monkeypatch):
    monkeypatch.setenv("BUSINESS_OWNER_IDS", "")
    telegram.connect_business("shop", SHOP_OWNER, can_reply=True)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, business_message("shop", "красное сухое к стейку до 3000"))
    assert texts_to(telegram, CUSTOMER) == []


def test_the_shops_own_business_account_is_answered(environment, fresh_memory, telegram):
    telegram.connect_business("shop", SHOP_OWNER, can_reply=True)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, business_message("shop", "красное сухое к стейку до 3000"))
    assert texts_to(telegram, CUSTOMER)
    assert texts_to(telegram, SHOP_OWNER) == [] and texts_to(telegram, ADMIN) == []


@pytest.mark.parametrize("command", ["/stats", "/report"])
def test_admin_commands_in_a_business_chat_answer_nothing_even_where_the_chat_id_is_the_admins(
    environment, fresh_memory, telegram, command
):
    """The admin writes as a customer to a Business account (the shop's own or a stranger's): in a Business
    chat the chat's id is the admin's own, yet the shop's figures never go there."""
    telegram.connect_business("shop", SHOP_OWNER, can_reply=True)
    telegram.connect_business("stranger-3", STRANGER, can_reply=True)
    bot = make_bot(fresh_memory, telegram)
    for connection in ("shop", "stranger-3"):
        before = len(telegram.calls)
        deliver(bot, business_message(connection, command, chat=ADMIN))
        sent = [c for c in telegram.calls[before:] if c.method in ("sendMessage", "sendPhoto") and c.delivered]
        assert not [c for c in sent if c.params.get("business_connection_id")], "nothing in a Business chat"
        assert not [c for c in sent if "Сводка" in (c.params.get("text") or "") or c.method == "sendPhoto"]
    # In the admin chat itself the command works.
    before = len(telegram.calls)
    deliver(bot, text_update(next(_ids), command, ADMIN))
    answered = [c.params.get("text") or "" for c in telegram.calls[before:] if c.method == "sendMessage"]
    assert answered and (answered[0].startswith("Сводка сомелье") or command == "/report")


def test_admin_commands_in_a_group_or_a_channel_with_the_admins_id_answer_nothing(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    for chat in ({"id": -100777, "type": "supergroup", "title": "Чужая группа"},):
        before = len(telegram.calls)
        deliver(bot, text_update(next(_ids), "/stats", chat["id"], chat=chat))
        assert not [c for c in telegram.calls[before:] if c.method == "sendMessage" and c.delivered]
    # A channel's direct messages with the admin's id as the chat: never the admin chat.
    telegram.direct_messages_chat(ADMIN)
    before = len(telegram.calls)
    update = text_update(
        next(_ids), "/stats", ADMIN, chat={"id": ADMIN, "type": "supergroup", "is_direct_messages": True}
    )
    update["message"]["direct_messages_topic"] = {"topic_id": 5}
    deliver(bot, update)
    assert not [c for c in telegram.calls[before:] if "Сводка" in (c.params.get("text") or "")]


def test_the_weekly_report_shows_unmet_demand_without_the_customers_personal_data(environment, fresh_memory, telegram):
    """Customers ask for what the shop does not stock and leave their phones, addresses, names and e-mails:
    the report counts each request, masked; two phones in the same request are one line counted twice."""
    bot = make_bot(fresh_memory, telegram)
    asked = [
        (7001, "вино из Японии, мой телефон +7 916 111-22-33"),
        (7002, "Вино из Японии, мой телефон 8 (926) 444-55-66"),
        (7003, "вино из Японии на ул. Ленина, д. 5, кв. 12"),
        (7004, "вино из Японии, меня зовут Анна Петрова, anna.petrova@mail.ru"),
        (7005, "вино из Японии, пишите @anna_petrova"),
    ]
    for chat, text in asked:
        deliver(bot, text_update(next(_ids), text, chat))
    deliver(bot, text_update(next(_ids), "/report", ADMIN))
    report = "\n".join(t for t in texts_to(telegram, ADMIN) if t.startswith("📊"))
    unmet = report.split("Искали, но не нашли в каталоге:")[1].split("\n\n")[0]
    assert "• «вино из японии, мой телефон [телефон]» — 2" in unmet
    assert "• «вино из японии на [адрес]» — 1" in unmet
    assert "• «вино из японии, меня зовут [имя], [e-mail]» — 1" in unmet
    assert "• «вино из японии, пишите [ник]» — 1" in unmet
    for private in ("111-22-33", "444-55-66", "916", "926", "Ленина", "кв. 12", "Анна", "Петрова", "anna", "@"):
        assert private.casefold() not in report.casefold(), private
