"""ProgressiveReply against the fake Bot API: drafts where Telegram allows them, parts sent once, redelivery."""

from __future__ import annotations

import pytest
from sommelier.domain.answer import WineRecommendation
from sommelier.telegram.client import BadRequest, TelegramClient
from sommelier.telegram.delivery import InMemoryDeliveryLog, Sender
from sommelier.telegram.place import Place
from sommelier.telegram.progressive import DraftSupport, ProgressiveReply
from sommelier.telegram.render import render_answer
from sommelier.telegram.state import InMemoryTurnPlans

from tests.fakes.telegram_server import FakeTelegram
from tests.wines import as_wine

CHAT = 7001
WINE = as_wine(name="Риоха Крианса", producer="Бодегас", region="Риоха", price_rub=1990)


class NoPhotos:
    def presigned_url(self, key):
        return None

    def get(self, key):
        return None


@pytest.fixture
def telegram():
    with FakeTelegram() as fake:
        yield fake


@pytest.fixture
def client(telegram):
    with TelegramClient(telegram.token, telegram.base_url, read_timeout=5) as c:
        yield c


def progressive(client, *, log=None, plans=None, drafts=None, chat=CHAT, private=True, key="42", clock=None):
    log = log if log is not None else InMemoryDeliveryLog()
    return ProgressiveReply(
        client=client,
        sender=Sender(client, NoPhotos(), log, sleep=lambda _: None),
        plans=plans if plans is not None else InMemoryTurnPlans(),
        key=key,
        place=Place(chat),
        private=private,
        drafts=drafts or DraftSupport(),
        draft_interval=1.0,
        **({"clock": clock} if clock else {}),
    )


def test_the_fake_accepts_drafts_only_where_telegram_does(client, telegram):
    assert client.send_message_draft(CHAT, 5, "") is True
    for chat, draft_id, text in ((-100123, 5, "x"), (CHAT, 0, "x"), (CHAT, 5, "я" * 4097)):
        with pytest.raises(BadRequest):
            client.send_message_draft(chat, draft_id, text)
    telegram.refuse_drafts(CHAT)
    with pytest.raises(BadRequest, match="not available"):
        client.send_message_draft(CHAT, 5, "x")


def test_drafts_are_throttled_then_the_intro_and_a_card_are_sent(client, telegram):
    now = [0.0]
    reply = progressive(client, clock=lambda: now[0])
    reply.start()
    for step, text in enumerate(["Вот", "Вот что", "Вот что я", "Вот что я нашёл"]):
        now[0] = step * 0.6
        reply.draft(text)
    assert [c.params["text"] for c in telegram.drafts(CHAT)] == ["", "Вот что я"]  # at most one a second
    reply.intro("Вот что я нашёл.")
    reply.wine(WineRecommendation(wine_id=WINE.id, wine_name=WINE.name, description="К стейку."), WINE)
    sent = [c.params.get("text") for c in telegram.sent_messages(CHAT)]
    assert sent[0] == "Вот что я нашёл." and sent[1].startswith("<b>Риоха Крианса</b>")


def test_refused_drafts_fall_back_to_typing_and_the_refusal_is_remembered(client, telegram):
    drafts = DraftSupport()
    telegram.refuse_drafts(CHAT)
    progressive(client, drafts=drafts).start()
    progressive(client, drafts=drafts, key="43").start()
    assert len(telegram.calls_of("sendMessageDraft")) == 1
    assert len(telegram.calls_of("sendChatAction")) == 2
    assert drafts.allowed(CHAT + 1), "another chat may still use drafts"


def test_a_group_gets_typing(client, telegram):
    progressive(client, chat=-4001, private=False).start()
    assert telegram.calls_of("sendMessageDraft") == [] and telegram.calls_of("sendChatAction")


def test_a_redelivered_update_knows_what_was_shown_and_sends_only_the_rest(client, telegram):
    log, plans = InMemoryDeliveryLog(), InMemoryTurnPlans()
    first = progressive(client, log=log, plans=plans)
    first.intro("Вот что я нашёл.")
    recommendation = WineRecommendation(wine_id=WINE.id, wine_name=WINE.name, description="К стейку.")
    first.wine(recommendation, WINE)
    # the process dies here; SQS brings the update back
    again = progressive(client, log=log, plans=plans)
    assert again.shown.intro == "Вот что я нашёл." and again.shown.wine_ids() == {WINE.id}
    from sommelier.domain.answer import SommelierResponse

    final = SommelierResponse(
        response_type="recommendation", intro="Вот что я нашёл.", wines=[recommendation], closing="Ещё?"
    )
    plan = again.finish(render_answer(final, {WINE.id: WINE}, "42"), final.intro)
    Sender(client, NoPhotos(), log, sleep=lambda _: None).deliver(CHAT, "42", plan)
    sent = [c.params.get("text") for c in telegram.sent_messages(CHAT)]
    assert len(sent) == 3 and sent[-1] == "Ещё?"


def test_a_429_on_a_draft_pauses_drafts_for_retry_after(client, telegram):
    telegram.draft_min_interval = 10.0  # the fake answers faster changes of one draft with 429, retry_after 1
    now = [0.0]
    reply = progressive(client, clock=lambda: now[0])
    reply.draft_interval = 0.0
    reply.start()
    reply.draft("Вот")  # too soon for the fake: 429
    now[0] = 0.5
    reply.draft("Вот что")  # inside retry_after: not even tried
    assert [c.http_status for c in telegram.calls_of("sendMessageDraft")] == [200, 429]
    now[0] = 1.5
    telegram.draft_min_interval = None
    reply.draft("Вот что я")
    assert [c.params["text"] for c in telegram.drafts(CHAT)] == ["", "Вот что я"]
