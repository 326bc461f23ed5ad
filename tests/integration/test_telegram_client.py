"""TelegramClient against the fake Bot API over real loopback HTTP."""

from __future__ import annotations

import logging
import socket
import traceback

import httpx2
import pytest
from sommelier.telegram.client import (
    BadRequest,
    Forbidden,
    Message,
    NetworkError,
    RetryAfter,
    ServerError,
    TelegramClient,
    TelegramError,
    User,
    WebhookInfo,
    mask_token,
)

from tests.fakes.telegram_server import FakeTelegram

TOKEN = "7012345678:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"  # shaped like a real token
CHAT = 777
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture(scope="module")
def server():
    """This module's fake Bot API has a real-shaped token; `fake` and `client` (conftest.py) use it."""
    with FakeTelegram(token=TOKEN) as fake:
        yield fake


def assert_no_token(exc: BaseException) -> None:
    rendered = "".join(traceback.format_exception(exc)) + str(exc) + repr(exc)
    assert TOKEN not in rendered
    assert TOKEN.split(":", 1)[1] not in rendered


# --------------------------------------------------------------------------- #
# Methods
# --------------------------------------------------------------------------- #
def test_get_me(client):
    me = client.get_me()
    assert isinstance(me, User) and me.is_bot and me.username == "sommelier_test_bot"
    assert me.id == 7012345678


def test_send_message_html_markup_and_reply(fake, client):
    first = client.send_message(CHAT, "plain")
    kb = {"inline_keyboard": [[{"text": "👍", "callback_data": "fb:1:x"}]]}
    msg = client.send_message(
        CHAT, "<b>Привет</b> &amp; пока", parse_mode="HTML", reply_markup=kb, reply_to_message_id=first.message_id
    )
    assert isinstance(msg, Message)
    assert msg.text == "Привет & пока" and msg.chat.id == CHAT and msg.message_id == first.message_id + 1
    assert msg.reply_markup == kb
    call = fake.calls_of("sendMessage")[-1]
    assert call.params["parse_mode"] == "HTML"
    assert call.result["reply_to_message"]["message_id"] == first.message_id
    assert call.result["entities"] == [{"offset": 0, "length": 6, "type": "bold"}]


def test_send_photo_by_url_file_id_and_upload(fake, client):
    by_url = client.send_photo(
        CHAT, "https://bucket.example/wine.png?X-Amz-Signature=abc", caption="<b>Вино</b>", parse_mode="HTML"
    )
    assert by_url.caption == "Вино" and by_url.largest_file_id
    assert by_url.largest_file_id == max(by_url.photo, key=lambda s: s.width).file_id

    again = client.send_photo(CHAT, by_url.largest_file_id, caption="повтор")
    assert again.largest_file_id == by_url.largest_file_id

    kb = {"inline_keyboard": [[{"text": "Ещё", "callback_data": "more:x"}]]}
    uploaded = client.send_photo(
        CHAT,
        PNG,
        caption="<i>загрузка</i> & <b>жирный</b>".replace("& ", "&amp; "),
        parse_mode="HTML",
        reply_markup=kb,
        filename="malbec.png",
    )
    assert uploaded.caption == "загрузка & жирный" and uploaded.reply_markup == kb
    assert uploaded.largest_file_id not in (None, by_url.largest_file_id)

    sources = [c.meta.get("photo_source") for c in fake.calls_of("sendPhoto")]
    assert sources == ["url", "file_id", "upload"]
    up = fake.calls_of("sendPhoto")[-1]
    assert up.files["photo"] == PNG and up.meta["filenames"]["photo"] == "malbec.png"
    assert up.content_type == "multipart/form-data"
    assert up.params["chat_id"] == CHAT and up.params["reply_markup"] == kb


def test_chat_action_and_callback_answer(fake, client):
    assert client.send_chat_action(CHAT) is True
    assert fake.calls_of("sendChatAction")[-1].params["action"] == "typing"
    with pytest.raises(BadRequest):
        client.send_chat_action(CHAT, "dancing")
    assert client.answer_callback_query("cbq-1", text="Спасибо!") is True
    assert fake.calls_of("answerCallbackQuery")[-1].params == {"callback_query_id": "cbq-1", "text": "Спасибо!"}
    assert client.answer_callback_query("cbq-2") is True
    assert "text" not in fake.calls_of("answerCallbackQuery")[-1].params


def test_edit_message_reply_markup(client):
    kb = {"inline_keyboard": [[{"text": "👍", "callback_data": "fb:1:x"}]]}
    msg = client.send_message(CHAT, "оцените", reply_markup=kb)
    with pytest.raises(BadRequest) as err:
        client.edit_message_reply_markup(CHAT, msg.message_id, kb)
    assert err.value.is_not_modified
    edited = client.edit_message_reply_markup(CHAT, msg.message_id, None)  # remove the keyboard
    assert isinstance(edited, Message) and edited.reply_markup is None


def test_webhook_methods(fake, client):
    assert (
        client.set_webhook(
            "https://example.com/hook",
            "s3cr3t_-",
            allowed_updates=["message", "callback_query"],
            drop_pending_updates=True,
        )
        is True
    )
    assert fake.webhook["secret_token"] == "s3cr3t_-"
    info = client.get_webhook_info()
    assert isinstance(info, WebhookInfo)
    assert info.url == "https://example.com/hook" and info.allowed_updates == ["message", "callback_query"]
    with pytest.raises(TelegramError) as err:  # 409 while a webhook is set
        client.get_updates()
    assert err.value.error_code == 409 and type(err.value) is TelegramError
    with pytest.raises(BadRequest):
        client.set_webhook("http://insecure.example/hook", "s")
    assert client.delete_webhook(drop_pending_updates=True) is True
    assert client.get_webhook_info().url == ""


def test_get_updates(fake, client):
    u1 = fake.push_update({"message": {"message_id": 1, "chat": {"id": CHAT, "type": "private"}, "text": "hi"}})
    u2 = fake.push_update({"callback_query": {"id": "q", "data": "more:x"}})
    ups = client.get_updates(timeout=0)
    assert [u["update_id"] for u in ups] == [u1["update_id"], u2["update_id"]]
    assert ups[0]["message"]["text"] == "hi"
    assert [u["update_id"] for u in client.get_updates(offset=u2["update_id"])] == [u2["update_id"]]
    assert client.get_updates(offset=u2["update_id"] + 1, timeout=1) == []  # long poll, capped by the fake
    fake.push_update({"edited_message": {"message_id": 2, "chat": {"id": CHAT, "type": "private"}}})
    assert client.get_updates(allowed_updates=["message"]) == []


# --------------------------------------------------------------------------- #
# Errors
# --------------------------------------------------------------------------- #
def test_429_retry_after(fake, client):
    fake.fail_next("sendMessage", status=429, retry_after=7)
    with pytest.raises(RetryAfter) as err:
        client.send_message(CHAT, "x")
    assert err.value.retry_after == 7 and err.value.error_code == 429
    assert isinstance(err.value, TelegramError)
    assert_no_token(err.value)


def test_403_forbidden(fake, client):
    fake.fail_next("sendPhoto", status=403)
    with pytest.raises(Forbidden) as err:
        client.send_photo(CHAT, "https://x.example/a.png")
    assert err.value.description == "Forbidden: bot was blocked by the user"
    assert_no_token(err.value)


def test_400_parse_error_and_bad_file(client):
    with pytest.raises(BadRequest) as err:
        client.send_message(CHAT, "<b>unclosed", parse_mode="HTML")
    assert err.value.is_parse_error and not err.value.is_bad_file
    with pytest.raises(BadRequest) as err:
        client.send_photo(CHAT, "AgACnotAKnownFileId")
    assert err.value.is_bad_file and not err.value.is_parse_error
    with pytest.raises(BadRequest) as err:
        client.send_photo(CHAT, "https://bucket.example/missing.png")
    assert err.value.is_bad_file
    for description in (
        "Bad Request: failed to get HTTP URL content",
        "Bad Request: wrong type of the web page content",
    ):
        assert BadRequest(400, description).is_bad_file
    with pytest.raises(BadRequest) as err:
        client.send_message(0, "x")
    assert not err.value.is_parse_error and not err.value.is_bad_file
    assert err.value.description == "Bad Request: chat not found"
    assert_no_token(err.value)


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_server_error(fake, client, status):
    fake.fail_next("sendMessage", status=status)
    with pytest.raises(ServerError) as err:
        client.send_message(CHAT, "x")
    assert err.value.error_code == status
    assert_no_token(err.value)


def test_non_json_gateway_error_is_server_error():
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(502, text="<html>Bad Gateway</html>")

    with TelegramClient(TOKEN, "https://api.telegram.org", transport=httpx2.MockTransport(handler)) as c:
        with pytest.raises(ServerError) as err:
            c.get_me()
    assert err.value.error_code == 502
    assert_no_token(err.value)


def test_wrong_token_is_401_and_masked(fake):
    other = "7012345678:AAHwrongwrongwrongwrongwrongwrongwro"
    with TelegramClient(other, fake.base_url) as c:
        with pytest.raises(TelegramError) as err:
            c.get_me()
    assert err.value.error_code == 401
    assert other not in str(err.value)


def test_read_timeout_means_request_sent(fake):
    fake.delay("sendMessage", 1.0)
    with TelegramClient(TOKEN, fake.base_url, read_timeout=0.2) as c:
        with pytest.raises(NetworkError) as err:
            c.send_message(CHAT, "slow")
    assert err.value.request_sent is True
    assert fake.wait_for_calls("sendMessage")[0].delivered  # Telegram did deliver it
    assert_no_token(err.value)


def test_connection_reset_after_request_means_request_sent(fake, client):
    fake.reset_after_request("sendPhoto")
    with pytest.raises(NetworkError) as err:
        client.send_photo(CHAT, "https://x.example/wine.png")
    assert err.value.request_sent is True
    assert fake.sent_messages(CHAT) and fake.calls_of("sendPhoto")[0].connection_reset
    assert_no_token(err.value)
    # The client recovers on a new connection.
    assert client.send_message(CHAT, "after").text == "after"


def test_connect_refused_means_not_sent():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with TelegramClient(TOKEN, f"http://127.0.0.1:{port}") as c:
        with pytest.raises(NetworkError) as err:
            c.send_message(CHAT, "x")
    assert err.value.request_sent is False and err.value.error_code == 0
    assert_no_token(err.value)


def test_token_not_in_repr_or_logs(fake, client, caplog):
    assert TOKEN not in repr(client)
    with caplog.at_level(logging.DEBUG):
        client.get_me()
        fake.fail_next("getMe", status=500)
        with pytest.raises(ServerError):
            client.get_me()
    assert "getMe" in caplog.text  # the httpx2 request line is there...
    assert TOKEN not in caplog.text  # ...without the token
    assert mask_token(f"/bot{TOKEN}/getMe") == "/bot***/getMe"
    with pytest.raises(ValueError):
        TelegramClient("", fake.base_url)


@pytest.mark.parametrize("base_url", ["http://[bad", "http://exa mple.com", "ftp://example.com"])
def test_bad_base_url_does_not_leak_the_token(base_url):
    token = "123:secret-token-value-xxxxxxxxxxxx"
    with TelegramClient(token, base_url) as c:
        with pytest.raises((ValueError, NetworkError)) as err:
            c.get_me()
    rendered = "".join(traceback.format_exception(err.value))
    assert "secret-token-value" not in rendered
