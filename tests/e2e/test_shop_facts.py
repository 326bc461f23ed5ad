"""The shop's own facts and the care turns end to end (issue 36), through the real webhook, the router, the
in-memory store and the fake Bot API: what the customer reads, offline and in LLM mode, in private chats,
groups and Business chats. Expectations are written by hand from the shop file below."""

from __future__ import annotations

import itertools
import re

import pytest
from sommelier.domain.shop_facts import read_facts
from sommelier.shop import age_gate

from tests.bot_harness import configure_bot, deliver, make_bot, repositories_for, restart
from tests.fakes.telegram_updates import TEST_BOT, TEST_CHAT, text_update, user

SHOP = {
    "name": "Лоза",
    "timezone": "Asia/Yekaterinburg",
    "stores": [
        {
            "id": "lenina",
            "name": "Лоза на Ленина",
            "address": "Екатеринбург, ул. Ленина, 24",
            "hours": "ежедневно 10:00–22:00",
            "phone": "+7 343 200-00-00",
        }
    ],
    "pickup": "отложим на 24 часа, оплата и проверка возраста на кассе",
    "payment": "карты, СБП и наличные",
    "reservations": True,
    "promotions": [
        {"text": "скидка 10% на Красностоп", "until": "2001-01-31"},
        {"text": "второе игристое за полцены", "until": "2099-12-31"},
    ],
}
GROUP = {"id": -100777, "type": "supergroup", "title": "Винный клуб"}
_ids = itertools.count(90_000)
PHONE_OR_ADDRESS = re.compile(r"\+7|\d{3}-\d{2}|ул\.|улиц|проспект|\b\d{1,2}:\d{2}\b")
YES_DELIVERY = re.compile(r"доставим|привезём|привезем|курьер привез|оформ\w* заказ|оплатите онлайн", re.I)


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory)
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")
    yield


def with_facts(store):
    repositories_for(store).shop.put_shop_facts(read_facts(SHOP))


def say(bot, telegram, text, chat_id=TEST_CHAT, **extra):
    before = len(telegram.calls)
    deliver(bot, text_update(next(_ids), text, chat_id, **extra))
    return telegram.calls[before:]


def texts(calls) -> list[str]:
    return [  # the renderer keeps a number's groups together with narrow no-break spaces
        (c.result.get("text") or c.result.get("caption") or "").replace("\u202f", " ").replace("\u00a0", " ")
        for c in calls
        if c.method in ("sendMessage", "sendPhoto") and c.ok
    ]


def photos(calls) -> list:
    return [c for c in calls if c.method == "sendPhoto"]


QUESTIONS = {
    "address": "где находится ваш магазин?",
    "hours": "до скольки вы работаете сегодня?",
    "promotions": "есть ли у вас скидки?",
    "delivery": "а вы доставляете на дом?",
    "online": "можно заказать онлайн и оплатить картой?",
    "phone": "дайте ваш телефон",
    "pickup": "забронируйте мне бутылку Красностопа, заберу вечером",
}


def _bot(mode, monkeypatch, fresh_memory, telegram, llm):
    if mode == "llm":
        return make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return make_bot(fresh_memory, telegram)


@pytest.mark.parametrize("mode", ["offline", "llm"])
def test_without_a_shop_file_nothing_about_the_shop_is_invented(
    mode, environment, monkeypatch, fresh_memory, telegram, llm
):
    bot = _bot(mode, monkeypatch, fresh_memory, telegram, llm)
    for kind, question in QUESTIONS.items():
        said = " ".join(texts(say(bot, telegram, question)))
        assert said, kind
        assert not PHONE_OR_ADDRESS.search(said), f"{kind}: invented a fact: {said}"
        assert not YES_DELIVERY.search(said), f"{kind}: {said}"
        if kind in ("delivery", "online"):
            assert "закон" in said and "в магазине" in said, said
        else:
            assert re.search(r"неизвест|не знаю", said), f"{kind}: no honest «не знаю»: {said}"
    if mode == "llm":
        assert llm.chat_requests == [], "the shop's questions never reach the model to be made up"


@pytest.mark.parametrize("mode", ["offline", "llm"])
def test_with_a_shop_file_each_question_gets_the_shops_own_fact(
    mode, environment, monkeypatch, fresh_memory, telegram, llm
):
    with_facts(fresh_memory)
    bot = _bot(mode, monkeypatch, fresh_memory, telegram, llm)
    said = {kind: " ".join(texts(say(bot, telegram, q))) for kind, q in QUESTIONS.items()}
    assert "Екатеринбург, ул. Ленина, 24" in said["address"]
    assert "с 10:00 до 22:00" in said["hours"] and re.search(r"сейчас (открыто|закрыто)", said["hours"])
    assert "второе игристое за полцены" in said["promotions"]
    assert "Красностоп" not in said["promotions"], "a promotion past its end date is never mentioned"
    for kind in ("delivery", "online"):
        assert "закон" in said[kind] and "Екатеринбург, ул. Ленина, 24" in said[kind]
        assert not YES_DELIVERY.search(said[kind])
    assert "+7 343 200-00-00" in said["phone"]
    assert "отложим на 24 часа" in said["pickup"] and "на кассе" in said["pickup"]
    assert not any(photos(say(bot, telegram, q)) for q in ("а вы доставляете на дом?",))


def test_in_llm_mode_the_model_gets_the_facts_fenced_as_data(environment, monkeypatch, fresh_memory, telegram, llm):
    with_facts(fresh_memory)
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    say(bot, telegram, "красное сухое к стейку до 2000")  # unscripted: the model fails, offline answers
    prompt = str(llm.chat_requests[0]["messages"])
    assert "<shop_facts>" in prompt and "ул. Ленина, 24" in prompt and "второе игристое" in prompt
    assert "скидка 10% на Красностоп" not in prompt, "an ended promotion is not in the prompt either"
    assert "доставку" in prompt.lower()


CARE = {
    "мне 16, можно что-нибудь лёгкое?": "исполнилось 18",
    "я беременна, посоветуйте что-нибудь лёгкое": "беременности",
    "пью антибиотики, какое вино можно?": "не врач",
    "у меня аллергия на сульфиты": "Сульфиты",
}


@pytest.mark.parametrize("mode", ["offline", "llm"])
def test_care_turns_show_no_wine_in_every_chat_kind(mode, environment, monkeypatch, fresh_memory, telegram, llm):
    monkeypatch.setenv("BUSINESS_OWNER_IDS", "290011999")  # the shop's own Business account
    bot = _bot(mode, monkeypatch, fresh_memory, telegram, llm)
    telegram.connect_business("shop-care", 290011999, can_reply=True)
    mention = f"@{TEST_BOT} "
    entity = [{"type": "mention", "offset": 0, "length": len(TEST_BOT) + 1}]
    for n, (question, expected) in enumerate(CARE.items()):
        private = say(bot, telegram, question)
        group = say(
            bot,
            telegram,
            mention + question,
            chat_id=GROUP["id"],
            chat=GROUP,
            **{"from": user(611000)},
            entities=entity,
        )
        before = len(telegram.calls)
        deliver(bot, _business(n, question))
        business = telegram.calls[before:]
        for kind, calls in (("private", private), ("group", group), ("business", business)):
            said = " ".join(texts(calls))
            assert expected in said, f"{kind}: {question} → {said}"
            assert not photos(calls), f"{kind}: {question} showed wine"
            assert "без сульфитов" not in said.replace("Вина совсем без сульфитов", "")
    if mode == "llm":
        assert llm.chat_requests == []


def test_alcohol_free_is_offered_only_when_the_catalogue_has_it(environment, monkeypatch, fresh_memory, telegram):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    bot = make_bot(fresh_memory, telegram)
    calls = say(bot, telegram, "есть безалкогольное вино?")
    assert "Безалкогольного вина в нашем каталоге сейчас нет" in " ".join(texts(calls)) and not photos(calls)


def test_a_stated_age_under_18_resets_the_age_answer(environment, monkeypatch, fresh_memory, telegram):
    monkeypatch.delenv("SOMMELIER_AGE_GATE")  # the default: on
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    bot = restart(make_bot(fresh_memory, telegram))
    say(bot, telegram, "привет")
    press_yes = {
        "update_id": next(_ids),
        "callback_query": {
            "id": "cb-adult",
            "from": user(TEST_CHAT),
            "chat_instance": "1",
            "message": {
                "message_id": telegram.sent_messages(TEST_CHAT)[-1].result["message_id"],
                "date": 1763800000,
                "chat": {"id": TEST_CHAT, "type": "private"},
            },
            "data": f"age:1:{TEST_CHAT}",
        },
    }
    deliver(bot, press_yes)
    calls = say(bot, telegram, "мне 16, можно что-нибудь лёгкое?")
    assert "исполнилось 18" in " ".join(texts(calls)) and not photos(calls)
    assert [a.is_adult for a in fresh_memory.age_answers.values() if a.telegram_user_id == TEST_CHAT] == [False]
    calls = say(bot, telegram, "красное сухое к стейку")
    assert texts(calls) == [age_gate.QUESTION], "the question comes again"


def _business(n: int, text: str) -> dict:
    customer = 7_700_000 + n
    return {
        "update_id": next(_ids),
        "business_message": {
            "business_connection_id": "shop-care",
            "message_id": 6000 + n,
            "from": {"id": customer, "is_bot": False, "first_name": "Дмитрий"},
            "chat": {"id": customer, "type": "private", "first_name": "Дмитрий"},
            "date": 1787910000,
            "text": text,
        },
    }
