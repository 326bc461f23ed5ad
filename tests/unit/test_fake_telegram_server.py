"""Tests for the fake Telegram Bot API server (tests/fakes/telegram_server.py)."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

try:
    import httpx
except ImportError:  # the venv ships the drop-in fork under its own name
    import httpx2 as httpx  # type: ignore[no-redef]

from tests.fakes.telegram_server import FakeTelegram, HtmlParseError, parse_html, utf16_len

CHAT = 4242
GROUP = -1001234567890


@pytest.fixture(scope="module")
def server():
    with FakeTelegram() as fake:
        yield fake


@pytest.fixture()
def tg(server):
    server.reset()
    yield server
    server.reset()


@pytest.fixture(scope="module")
def client():
    with httpx.Client(timeout=5.0) as c:
        yield c


def api(tg: FakeTelegram, method: str) -> str:
    return f"{tg.base_url}/bot{tg.token}/{method}"


def post(client, tg, method, **kwargs):
    return client.post(api(tg, method), **kwargs)


def ok(resp) -> object:
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["ok"] is True
    return body["result"]


def err(resp, status: int) -> dict:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["ok"] is False
    assert body["error_code"] == status
    return body


# --------------------------------------------------------------------------- lifecycle / auth
def test_base_url_and_context_manager():
    fake = FakeTelegram("1:X")
    with pytest.raises(RuntimeError):
        _ = fake.base_url
    with fake as f:
        assert f.base_url.startswith("http://127.0.0.1:")
        r = httpx.get(f"{f.base_url}/bot1:X/getMe", timeout=5)
        assert r.json()["result"]["id"] == 1
    fake.stop()  # idempotent


def test_get_me(tg, client):
    me = ok(post(client, tg, "getMe"))
    assert me["is_bot"] is True
    assert me["username"] == "sommelier_test_bot"
    assert me["id"] == 123456
    # GET works too, and method names are case-insensitive
    assert ok(client.get(api(tg, "getme")))["username"] == "sommelier_test_bot"
    assert [c.method for c in tg.calls] == ["getMe", "getMe"]
    assert tg.calls[1].http_method == "GET"


def test_wrong_token_401(tg, client):
    r = client.post(f"{tg.base_url}/bot999:WRONG/sendMessage", json={"chat_id": CHAT, "text": "hi"})
    body = err(r, 401)
    assert body["description"] == "Unauthorized"
    assert "parameters" not in body
    assert tg.calls[-1].token == "999:WRONG" and tg.calls[-1].delivered is False
    assert tg.sent_messages() == []


def test_unknown_method_404(tg, client):
    assert err(post(client, tg, "sendTelepathy", json={}), 404)["description"] == "Not Found"
    assert err(client.get(f"{tg.base_url}/nothing"), 404)["description"] == "Not Found"


# --------------------------------------------------------------------------- sendMessage
def test_send_message_success_json(tg, client):
    markup = {"inline_keyboard": [[{"text": "More", "callback_data": "more:1"}]]}
    m1 = ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "Hello", "reply_markup": markup}))
    m2 = ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "Again", "reply_to_message_id": 1}))
    g1 = ok(post(client, tg, "sendMessage", json={"chat_id": GROUP, "text": "Group"}))
    assert (m1["message_id"], m2["message_id"], g1["message_id"]) == (1, 2, 1)
    assert m1["chat"] == {"id": CHAT, "type": "private", "first_name": "Tester"}
    assert m1["from"]["is_bot"] is True and m1["from"]["username"] == "sommelier_test_bot"
    assert m1["text"] == "Hello" and isinstance(m1["date"], int)
    assert m1["reply_markup"] == markup
    assert "reply_markup" not in m2
    assert m2["reply_to_message"]["message_id"] == 1
    assert g1["chat"]["id"] == GROUP and g1["chat"]["type"] == "supergroup"
    assert [c.params["text"] for c in tg.sent_messages()] == ["Hello", "Again", "Group"]
    assert [c.params["text"] for c in tg.sent_messages(CHAT)] == ["Hello", "Again"]
    assert [c.params["text"] for c in tg.sent_messages(GROUP)] == ["Group"]
    assert len(tg.calls_of("sendMessage")) == 3


def test_send_message_form_encoded_reply_markup(tg, client):
    markup = {"inline_keyboard": [[{"text": "Pair", "callback_data": "pair:42"}]]}
    r = post(client, tg, "sendMessage", data={"chat_id": str(CHAT), "text": "Form", "reply_markup": json.dumps(markup)})
    msg = ok(r)
    assert msg["reply_markup"] == markup
    call = tg.calls[-1]
    assert call.params["chat_id"] == CHAT  # coerced to int
    assert call.params["reply_markup"] == markup  # JSON-decoded
    assert call.content_type == "application/x-www-form-urlencoded"


def test_send_message_get_query(tg, client):
    msg = ok(client.get(api(tg, "sendMessage"), params={"chat_id": CHAT, "text": "via GET"}))
    assert msg["text"] == "via GET"


@pytest.mark.parametrize("text", [None, "", "   \n ", "<b></b>", "<b> </b>"])
def test_send_message_empty_text(tg, client, text):
    payload = {"chat_id": CHAT, "parse_mode": "HTML"}
    if text is not None:
        payload["text"] = text
    body = err(post(client, tg, "sendMessage", json=payload), 400)
    assert body["description"] == "Bad Request: message text is empty"
    assert tg.calls[-1].delivered is False
    assert tg.sent_messages() == []


def test_send_message_missing_chat(tg, client):
    assert (
        err(post(client, tg, "sendMessage", json={"text": "x"}), 400)["description"] == "Bad Request: chat_id is empty"
    )


def test_text_limit_cyrillic(tg, client):
    text = ("Вино " * 1000)[:4096]
    assert len(text) == 4096
    assert ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text}))["text"] == text
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text + "я"}), 400)
    assert body["description"] == "Bad Request: message is too long"


def test_text_limit_emoji_counts_utf16(tg, client):
    ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "🍷" * 2048}))  # 4096 code units
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "🍷" * 2048 + "a"}), 400)
    assert body["description"] == "Bad Request: message is too long"
    # 2049 code points but only 2049 < 4096 ... make sure it is *not* counted by code points
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "🍷" * 2049}), 400)
    assert body["description"] == "Bad Request: message is too long"


def test_text_limit_html_tags_not_counted(tg, client):
    inner = "Ж" * 4090
    text = f"<b>{inner[:2000]}</b><i>{inner[2000:]}</i>&lt;&gt;&amp;&quot;&#127863;"  # 4090 + 4 + 2
    msg = ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text, "parse_mode": "HTML"}))
    assert utf16_len(msg["text"]) == 4096
    assert msg["text"].endswith('<>&"🍷')
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text + "!", "parse_mode": "HTML"}), 400)
    assert body["description"] == "Bad Request: message is too long"
    # the same markup without parse_mode is literal and therefore too long
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text}), 400)
    assert body["description"] == "Bad Request: message is too long"


# --------------------------------------------------------------------------- HTML parse mode
def test_html_valid_nested_tags_and_entities(tg, client):
    text = (
        '<b>Bold <i>ital <u>under</u></i></b> <a href="https://example.com/?a=1&amp;b=2">link</a> '
        '<span class="tg-spoiler">sp</span> <tg-spoiler>sp2</tg-spoiler> <s>x</s><del>y</del><strike>z</strike> '
        "<strong>st</strong><em>em</em><ins>in</ins> <code>c&lt;d</code> "
        '<pre><code class="language-python">print(1 &gt; 0)</code></pre>'
        "<blockquote expandable>quote</blockquote><blockquote>q2</blockquote> "
        "&#8364; &#x20AC; 5 > 3 ‘Кьянти’ 🍷"
    )
    msg = ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text, "parse_mode": "HTML"}))
    assert msg["text"] == ("Bold ital under link sp sp2 xyz stemin c<d print(1 > 0)quoteq2 € € 5 > 3 ‘Кьянти’ 🍷")
    types = {e["type"] for e in msg["entities"]}
    assert {
        "bold",
        "italic",
        "underline",
        "text_link",
        "spoiler",
        "strikethrough",
        "code",
        "pre",
        "expandable_blockquote",
        "blockquote",
    } <= types
    link = next(e for e in msg["entities"] if e["type"] == "text_link")
    assert link["url"] == "https://example.com/?a=1&b=2"
    assert msg["text"][link["offset"] : link["offset"] + link["length"]] == "link"
    pre = next(e for e in msg["entities"] if e["type"] == "pre")
    assert pre["language"] == "python"
    # tag names are case-insensitive
    ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "<B>x</B>", "parse_mode": "html"}))


def test_html_entity_offsets_utf16():
    text, ents = parse_html("🍷 <b>Barolo</b>")
    assert text == "🍷 Barolo"
    assert ents == [{"offset": 3, "length": 6, "type": "bold"}]


@pytest.mark.parametrize(
    "text",
    [
        "<br>line",  # unsupported tag
        "<div>x</div>",  # unsupported tag
        "<b>unclosed",  # missing end tag
        "<b><i>x</b></i>",  # mismatched
        "x</b>",  # unexpected end tag
        "a < b",  # bare <
        "a <b",  # unclosed start tag
        "rock & roll",  # bare &
        "AT&T",  # & not an entity
        "&nbsp;x",  # unsupported named entity
        "&#xZZ;x",  # bad numeric entity
        "&amp x",  # missing semicolon
        '<span class="other">x</span>',  # span must be a spoiler
        "<b>x</b",  # unclosed end tag
    ],
)
def test_html_parse_failures(tg, client, text):
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text, "parse_mode": "HTML"}), 400)
    assert body["description"].startswith("Bad Request: can't parse entities: ")
    assert tg.sent_messages() == []
    # literal (no parse_mode) is fine
    ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": text}))


def test_html_error_reasons():
    with pytest.raises(HtmlParseError, match='Unsupported start tag "br" at byte offset 6'):
        parse_html("Вин<br>")  # offsets are UTF-8 byte offsets: "Вин" is 6 bytes
    with pytest.raises(HtmlParseError, match='expected "</i>", found "</b>"'):
        parse_html("<b><i>x</b></i>")
    with pytest.raises(HtmlParseError, match='Can\'t find end tag corresponding to start tag "b"'):
        parse_html("<b>x")


def test_unsupported_parse_mode(tg, client):
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "x", "parse_mode": "BBCode"}), 400)
    assert body["description"] == "Bad Request: unsupported parse_mode"
    ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "*x* & <y>", "parse_mode": "MarkdownV2"}))


def test_callback_data_too_long(tg, client):
    markup = {"inline_keyboard": [[{"text": "x", "callback_data": "я" * 33}]]}  # 66 bytes
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "x", "reply_markup": markup}), 400)
    assert body["description"] == "Bad Request: BUTTON_DATA_INVALID"


# --------------------------------------------------------------------------- sendPhoto
def test_send_photo_multipart_upload_and_file_id_reuse(tg, client):
    markup = {"inline_keyboard": [[{"text": "Buy", "url": "https://shop.example/1"}]]}
    image = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 10
    r = post(
        client,
        tg,
        "sendPhoto",
        data={
            "chat_id": str(CHAT),
            "caption": "<b>Barolo</b> 2019",
            "parse_mode": "HTML",
            "reply_markup": json.dumps(markup),
        },
        files={"photo": ("wine.png", image, "image/png")},
    )
    msg = ok(r)
    assert msg["caption"] == "Barolo 2019"
    assert msg["caption_entities"] == [{"offset": 0, "length": 6, "type": "bold"}]
    assert msg["reply_markup"] == markup
    assert len(msg["photo"]) == 3
    for size in msg["photo"]:
        assert set(size) == {"file_id", "file_unique_id", "width", "height", "file_size"}
        assert size["file_id"].startswith("AgACAgIAAx")
    assert msg["photo"][-1]["file_size"] == len(image)
    call = tg.calls[-1]
    assert call.files["photo"] == image
    assert call.params["reply_markup"] == markup and call.params["chat_id"] == CHAT
    assert call.meta["photo_source"] == "upload" and call.meta["photo_size"] == len(image)

    file_id = msg["photo"][-1]["file_id"]
    again = ok(post(client, tg, "sendPhoto", json={"chat_id": GROUP, "photo": file_id}))
    assert again["photo"][-1]["file_id"] == file_id
    assert "caption" not in again
    assert [c.method for c in tg.sent_messages()] == ["sendPhoto", "sendPhoto"]


def test_send_photo_url_gets_fresh_file_id(tg, client):
    a = ok(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": "https://img.example/a.jpg"}))
    b = ok(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": "https://img.example/a.jpg"}))
    assert a["photo"][-1]["file_id"] != b["photo"][-1]["file_id"]
    assert tg.calls[-1].meta["photo_url"] == "https://img.example/a.jpg"
    assert (a["message_id"], b["message_id"]) == (1, 2)


@pytest.mark.parametrize("photo", ["AgACAgIAAxUNKNOWN", "https://img.example/missing.jpg"])
def test_send_photo_wrong_file(tg, client, photo):
    body = err(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": photo}), 400)
    assert body["description"] == "Bad Request: wrong file identifier/HTTP URL specified"
    assert tg.sent_messages() == []


def test_send_photo_empty_upload_and_no_photo(tg, client):
    r = post(client, tg, "sendPhoto", data={"chat_id": str(CHAT)}, files={"photo": ("x.jpg", b"", "image/jpeg")})
    assert err(r, 400)["description"] == "Bad Request: file must be non-empty"
    r = post(client, tg, "sendPhoto", json={"chat_id": CHAT})
    assert err(r, 400)["description"] == "Bad Request: there is no photo in the request"


def test_caption_limit(tg, client):
    url = "https://img.example/ok.jpg"
    ok(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": url, "caption": "Ё" * 1024}))
    ok(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": url, "caption": "🍇" * 512}))
    html = "<i>" + "Ё" * 1020 + "</i>&amp;&amp;&amp;&amp;"  # 1024 after parsing
    ok(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": url, "caption": html, "parse_mode": "HTML"}))
    for caption, mode in (("Ё" * 1025, None), ("🍇" * 512 + ".", None), (html + "!", "HTML")):
        payload = {"chat_id": CHAT, "photo": url, "caption": caption}
        if mode:
            payload["parse_mode"] = mode
        body = err(post(client, tg, "sendPhoto", json=payload), 400)
        assert body["description"] == "Bad Request: message caption is too long"
    assert len(tg.sent_messages(CHAT)) == 3


# --------------------------------------------------------------------------- other methods
def test_chat_action_callback_edit_delete(tg, client):
    assert ok(post(client, tg, "sendChatAction", json={"chat_id": CHAT, "action": "typing"})) is True
    body = err(post(client, tg, "sendChatAction", json={"chat_id": CHAT, "action": "dancing"}), 400)
    assert body["description"] == "Bad Request: wrong parameter action in request"
    assert (
        ok(
            post(
                client,
                tg,
                "answerCallbackQuery",
                data={"callback_query_id": "q1", "text": "Saved", "show_alert": "true"},
            )
        )
        is True
    )
    assert tg.calls[-1].params["show_alert"] is True

    kb = {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}
    sent = ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "pick", "reply_markup": kb}))
    edited = ok(
        post(
            client,
            tg,
            "editMessageReplyMarkup",
            json={"chat_id": CHAT, "message_id": sent["message_id"], "reply_markup": {"inline_keyboard": []}},
        )
    )
    assert edited["message_id"] == sent["message_id"] and "reply_markup" not in edited
    body = err(
        post(client, tg, "editMessageReplyMarkup", json={"chat_id": CHAT, "message_id": sent["message_id"]}), 400
    )
    assert body["description"].startswith("Bad Request: message is not modified")
    # a message this fake never saw (e.g. from a pushed update) is accepted
    other = ok(
        post(client, tg, "editMessageReplyMarkup", json={"chat_id": CHAT, "message_id": 999, "reply_markup": kb})
    )
    assert other["reply_markup"] == kb
    assert ok(post(client, tg, "deleteMessage", json={"chat_id": CHAT, "message_id": sent["message_id"]})) is True


def test_webhook_lifecycle(tg, client):
    info = ok(post(client, tg, "getWebhookInfo"))
    assert info == {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
    r = post(
        client,
        tg,
        "setWebhook",
        json={
            "url": "https://abc.execute-api.eu-west-1.amazonaws.com/webhook",
            "secret_token": "s3cr3t_-X",
            "allowed_updates": ["message", "callback_query"],
            "drop_pending_updates": True,
        },
    )
    assert ok(r) is True and r.json()["description"] == "Webhook was set"
    info = ok(post(client, tg, "getWebhookInfo"))
    assert info["url"].endswith("/webhook") and info["allowed_updates"] == ["message", "callback_query"]
    assert tg.webhook["secret_token"] == "s3cr3t_-X"
    body = err(post(client, tg, "getUpdates"), 409)
    assert body["description"].startswith("Conflict: can't use getUpdates method while webhook is active")
    assert err(post(client, tg, "setWebhook", json={"url": "http://insecure"}), 400)["description"] == (
        "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
    )
    assert err(post(client, tg, "setWebhook", json={"url": "https://x.example", "secret_token": "bad token!"}), 400)
    assert ok(post(client, tg, "deleteWebhook", json={"drop_pending_updates": False})) is True
    assert ok(post(client, tg, "getWebhookInfo"))["url"] == ""
    assert tg.webhook is None


# --------------------------------------------------------------------------- getUpdates
def test_get_updates_offset_semantics(tg, client):
    u1 = tg.push_update({"message": {"message_id": 1, "chat": {"id": CHAT, "type": "private"}, "text": "hi"}})
    u2 = tg.push_update({"callback_query": {"id": "q", "data": "more:1"}})
    tg.push_update({"update_id": u2["update_id"] + 10, "message": {"message_id": 2, "text": "x"}})
    assert u2["update_id"] == u1["update_id"] + 1

    ups = ok(post(client, tg, "getUpdates", json={"timeout": 0}))
    assert [u["update_id"] for u in ups] == [u1["update_id"], u2["update_id"], u2["update_id"] + 10]
    # without a new offset nothing is confirmed
    assert len(ok(post(client, tg, "getUpdates", json={}))) == 3
    ups = ok(post(client, tg, "getUpdates", data={"offset": str(u2["update_id"]), "limit": "1"}))
    assert [u["update_id"] for u in ups] == [u2["update_id"]]
    assert len(tg.pending_updates) == 2  # u1 confirmed and forgotten
    ups = ok(post(client, tg, "getUpdates", json={"offset": u2["update_id"] + 11, "timeout": 0}))
    assert ups == [] and tg.pending_updates == []
    # next pushed id continues after the highest seen
    assert tg.push_update({"message": {}})["update_id"] == u2["update_id"] + 11
    # negative offset keeps only the last -offset updates
    tg.push_update({"message": {}})
    assert len(ok(post(client, tg, "getUpdates", json={"offset": -1}))) == 1


def test_get_updates_long_poll(tg, client):
    assert ok(post(client, tg, "getUpdates", json={"timeout": 30})) == []  # the wait is capped (at 1 s)

    threading.Timer(0.2, tg.push_update, args=({"message": {"text": "late"}},)).start()
    ups = ok(post(client, tg, "getUpdates", json={"timeout": 30}))
    assert ups and ups[0]["message"]["text"] == "late"  # an update arriving during the wait answers it


def test_stop_does_not_block_on_long_poll():
    fake = FakeTelegram().start()
    result = {}

    def poll():
        try:
            result["r"] = httpx.post(f"{fake.api_url}/getUpdates", json={"timeout": 50}, timeout=5)
        except httpx.HTTPError as exc:
            result["r"] = exc

    th = threading.Thread(target=poll)
    th.start()
    time.sleep(0.1)
    fake.stop()
    th.join(5)
    assert not th.is_alive() and "r" in result


# --------------------------------------------------------------------------- failure scripting
def test_fail_next_429_then_success(tg, client):
    tg.fail_next("sendMessage", status=429, retry_after=7)
    r = post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "hi"})
    body = err(r, 429)
    assert body["description"] == "Too Many Requests: retry after 7"
    assert body["parameters"] == {"retry_after": 7}
    msg = ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "hi"}))
    assert msg["message_id"] == 1  # the failed call did not consume a message id
    calls = tg.calls_of("sendMessage")
    assert [(c.http_status, c.delivered) for c in calls] == [(429, False), (200, True)]
    assert len(tg.sent_messages(CHAT)) == 1


def test_fail_next_403_and_500_and_times(tg, client):
    tg.fail_next("sendMessage", status=403)
    tg.fail_next("sendPhoto", status=500, times=2)
    body = err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "x"}), 403)
    assert body["description"] == "Forbidden: bot was blocked by the user" and "parameters" not in body
    for _ in range(2):
        body = err(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": "https://i.example/a.jpg"}), 500)
        assert body["description"] == "Internal Server Error"
    ok(post(client, tg, "sendPhoto", json={"chat_id": CHAT, "photo": "https://i.example/a.jpg"}))
    tg.fail_next("getMe", status=502)
    assert err(post(client, tg, "getMe"), 502)["description"] == "Bad Gateway"
    tg.fail_next("getMe", status=400, description="Bad Request: custom")
    assert err(post(client, tg, "getMe"), 400)["description"] == "Bad Request: custom"


def test_fail_when_predicate(tg, client):
    tg.fail_when(
        lambda c: c.method == "sendMessage" and c.params.get("chat_id") == GROUP,
        status=403,
        description="Forbidden: bot was kicked from the supergroup chat",
        times=1,
    )
    ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "fine"}))
    body = err(post(client, tg, "sendMessage", json={"chat_id": GROUP, "text": "nope"}), 403)
    assert body["description"] == "Forbidden: bot was kicked from the supergroup chat"
    ok(post(client, tg, "sendMessage", json={"chat_id": GROUP, "text": "now fine"}))
    # scripted failures take precedence over validation
    tg.fail_next("sendMessage", status=429, retry_after=2)
    assert err(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": ""}), 429)


def test_reset_after_request(tg):
    tg.reset_after_request("sendMessage")
    with httpx.Client(timeout=5) as c:
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            c.post(api(tg, "sendMessage"), json={"chat_id": CHAT, "text": "lost reply"})
        # the next call on the same client works again and gets the next message id
        assert ok(c.post(api(tg, "sendMessage"), json={"chat_id": CHAT, "text": "retry"}))["message_id"] == 2
    first = tg.calls_of("sendMessage")[0]
    assert first.delivered is True and first.connection_reset is True
    assert first.response["result"]["message_id"] == 1
    assert [c.params["text"] for c in tg.sent_messages(CHAT)] == ["lost reply", "retry"]


def test_delay(tg, client):
    tg.delay("sendMessage", 0.3)
    ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "slow"}))
    ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "fast"}))
    # a client timeout still leaves the message delivered server-side
    tg.delay("sendMessage", 0.5)
    with pytest.raises(httpx.TimeoutException):
        post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "timed out"}, timeout=0.1)
    assert tg.calls_of("sendMessage")[-1].delivered is True


def test_reset_clears_state(tg, client):
    tg.fail_next("sendMessage", status=500)
    tg.push_update({"message": {}})
    ok(post(client, tg, "getMe"))
    tg.reset()
    assert tg.calls == [] and tg.pending_updates == []
    assert ok(post(client, tg, "sendMessage", json={"chat_id": CHAT, "text": "x"}))["message_id"] == 1


# --------------------------------------------------------------------------- concurrency
def test_concurrent_send_message(tg):
    chats = [11, 22, -33, -1004444, 55]
    with httpx.Client(timeout=10, limits=httpx.Limits(max_connections=60)) as c:

        def send(i: int) -> dict:
            chat = chats[i % len(chats)]
            return ok(c.post(api(tg, "sendMessage"), json={"chat_id": chat, "text": f"msg {i}"}))

        with ThreadPoolExecutor(max_workers=50) as pool:
            results = list(pool.map(send, range(50)))
    for chat in chats:
        ids = sorted(m["message_id"] for m in results if m["chat"]["id"] == chat)
        assert ids == list(range(1, 11))
        sent = tg.sent_messages(chat)
        assert [s.response["result"]["message_id"] for s in sent] == list(range(1, 11))
    assert len(tg.calls) == 50 and all(call.http_status == 200 for call in tg.calls)
