"""Bad input at the front door: random and mutated Telegram updates, and broken HTTP bodies.

Through the webhook function (Mangum + the Starlette app + `Ingress`): always a 200 or a 4xx, never a 5xx, never a traceback
in the answer. Then the same updates through the agent consumer (`TelegramBot.process`, FakeTelegram,
the offline responder and a real PostgreSQL): a malformed update is not worth a retry, so no exception
escapes, and nothing sent to Telegram contains a traceback.
"""

from __future__ import annotations

import base64
import copy
import json

import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from sommelier.edge.ingress import MAX_BODY_BYTES
from sommelier.telegram.updates import UpdateError, parse_update, route

from tests.hardening.support import (
    HARDENING,
    SECRET,
    TRACEBACK,
    ListSink,
    json_strategies,
    make_bot,
    private_chat,
    record_figure,
    user,
    webhook_event,
    webhook_function,
)

# ------------------------------------------------------------------ every update type, well formed
GROUP = {"id": -1001234567890, "type": "supergroup", "title": "Винный клуб"}
BOT_USER = {"id": 42, "is_bot": True, "first_name": "Sommelier", "username": "sommelier_test_bot"}


def _message(**extra) -> dict:
    return {"message_id": 11, "date": 1763800000, "chat": private_chat(), "from": user(), **extra}


VALID_UPDATES: list[dict] = [
    {"update_id": 1, "message": _message(text="красное сухое к стейку до 2000")},
    {"update_id": 2, "message": _message(text="/start", entities=[{"type": "bot_command", "offset": 0, "length": 6}])},
    {"update_id": 3, "message": _message(text="/help", entities=[{"type": "bot_command", "offset": 0, "length": 5}])},
    {"update_id": 4, "message": _message(text="/reset", entities=[{"type": "bot_command", "offset": 0, "length": 6}])},
    {"update_id": 5, "message": _message(text="/unknown_command@sommelier_test_bot")},
    {
        "update_id": 6,
        "message": _message(photo=[{"file_id": "AgAD", "file_unique_id": "u1", "width": 90, "height": 90}]),
    },
    {
        "update_id": 7,
        "message": _message(
            sticker={
                "file_id": "CAAD",
                "file_unique_id": "u2",
                "width": 512,
                "height": 512,
                "type": "regular",
                "is_animated": False,
                "is_video": False,
            }
        ),
    },
    {"update_id": 8, "message": _message(voice={"file_id": "AwAD", "file_unique_id": "u3", "duration": 3})},
    {"update_id": 9, "message": _message(document={"file_id": "BQAD", "file_unique_id": "u4"}, caption="меню")},
    {"update_id": 10, "message": _message(location={"latitude": 55.75, "longitude": 37.62})},
    {"update_id": 11, "message": _message(contact={"phone_number": "+70000000000", "first_name": "А"})},
    {"update_id": 12, "edited_message": {**_message(text="что такое танины"), "edit_date": 1763800100}},
    {
        "update_id": 13,
        "callback_query": {
            "id": "cb1",
            "from": user(),
            "chat_instance": "ci",
            "data": "fb:1:5",
            "message": {"message_id": 5, "date": 1, "chat": private_chat()},
        },
    },
    {
        "update_id": 14,
        "callback_query": {
            "id": "cb2",
            "from": user(),
            "chat_instance": "ci",
            "data": "more:5",
            "message": {"message_id": 5, "date": 1, "chat": private_chat()},
        },
    },
    {"update_id": 15, "callback_query": {"id": "cb3", "from": user(), "chat_instance": "ci", "data": "garbage:::"}},
    {
        "update_id": 16,
        "my_chat_member": {
            "chat": private_chat(),
            "from": user(),
            "date": 2,
            "old_chat_member": {"status": "member", "user": BOT_USER},
            "new_chat_member": {"status": "kicked", "user": BOT_USER, "until_date": 0},
        },
    },
    {
        "update_id": 17,
        "my_chat_member": {
            "chat": GROUP,
            "from": user(),
            "date": 2,
            "old_chat_member": {"status": "left", "user": BOT_USER},
            "new_chat_member": {"status": "member", "user": BOT_USER},
        },
    },
    {
        "update_id": 18,
        "message": {
            **_message(
                text="@sommelier_test_bot что к пицце?", entities=[{"type": "mention", "offset": 0, "length": 19}]
            ),
            "chat": GROUP,
        },
    },
    {"update_id": 19, "message": {**_message(text="кто придёт в субботу?"), "chat": GROUP}},
    {"update_id": 20, "message": {**_message(text="я тоже бот"), "from": BOT_USER}},
    {
        "update_id": 21,
        "channel_post": {"message_id": 1, "date": 1, "chat": {"id": -100777, "type": "channel"}, "text": "новости"},
    },
    {"update_id": 22, "edited_channel_post": {"message_id": 1, "date": 1, "chat": {"id": -100777, "type": "channel"}}},
    {"update_id": 23, "inline_query": {"id": "iq", "from": user(), "query": "вино", "offset": ""}},
    {"update_id": 24, "chosen_inline_result": {"result_id": "r", "from": user(), "query": "вино"}},
    {"update_id": 25, "shipping_query": {"id": "s", "from": user(), "invoice_payload": "p", "shipping_address": {}}},
    {
        "update_id": 26,
        "pre_checkout_query": {
            "id": "p",
            "from": user(),
            "currency": "RUB",
            "total_amount": 100,
            "invoice_payload": "p",
        },
    },
    {"update_id": 27, "poll": {"id": "p", "question": "?", "options": [], "total_voter_count": 0}},
    {"update_id": 28, "poll_answer": {"poll_id": "p", "option_ids": [0]}},
    {
        "update_id": 29,
        "chat_member": {
            "chat": GROUP,
            "from": user(),
            "date": 1,
            "old_chat_member": {"status": "left", "user": user(5)},
            "new_chat_member": {"status": "member", "user": user(5)},
        },
    },
    {"update_id": 30, "chat_join_request": {"chat": GROUP, "from": user(), "user_chat_id": 1, "date": 1}},
    {
        "update_id": 31,
        "message_reaction": {
            "chat": private_chat(),
            "message_id": 1,
            "date": 1,
            "old_reaction": [],
            "new_reaction": [{"type": "emoji", "emoji": "👍"}],
        },
    },
    {"update_id": 32, "business_message": _message(text="бизнес")},
    {"update_id": 33},
]

# ------------------------------------------------------------------ strategies
json_scalars, json_values = json_strategies(max_text=40, max_key=12, max_leaves=16)
nasty_values = st.sampled_from(
    [
        None,
        True,
        0,
        -1,
        2**63,
        2**64 + 7,
        -(2**63) - 1,
        1.5,
        float("inf"),
        "",
        " ",
        "\x00",
        "\u202e\u200b",
        "x" * 5000,
        "я" * 9000,
        [],
        {},
        [[[[[]]]]],
        {"id": "1"},
        "<b>",
        "%s%s%n",
        "{{7*7}}",
        "' OR 1=1 --",
    ]
)
replacement = json_values | nasty_values


def _paths(node, prefix=()):
    """Every path to a value in the nested update (dict keys and list indexes)."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _mutate(update: dict, path: tuple, action: str, value) -> dict:
    parent = update
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete":
        del parent[last]
    else:
        parent[last] = value
    return update


@st.composite
def mutated_updates(draw) -> dict:
    update = copy.deepcopy(draw(st.sampled_from(VALID_UPDATES)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(update)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["delete", "replace"]))
        try:
            # a copy: the nasty constants are shared objects, and inserting one twice could make a cycle
            update = _mutate(update, path, action, copy.deepcopy(draw(replacement)))
        except (KeyError, IndexError, TypeError):
            continue
    if not isinstance(update, dict):
        return {"update_id": 1}
    return update


nasty_text = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=300),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "красное\x00сухое",
            "\u202eовтсуп\u202c",
            "🍷" * 700,
            "a" * 8192,
            "я" * 8193,
            "<b>жирный</b> & <script>alert(1)</script>",
            "**md** _x_ [link](http://e.com)",
            "/start@other_bot",
            "@sommelier_test_bot",
            "\n\n\n",
            '{"response_type": "recommendation"}',
            "%s %d {0}",
        ]
    ),
)
nasty_int = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63), st.sampled_from([0, -1, 1, 2**53, 2**63 - 1, -(2**31)])
)


@st.composite
def typed_mutations(draw) -> dict:
    """Updates that stay readable: leaves replaced by values of the same type (the nasty ones), extra fields."""
    update = copy.deepcopy(draw(st.sampled_from(VALID_UPDATES)))
    leaves = [p for p in _paths(update) if not isinstance(_get(update, p), (dict, list)) and p[-1] != "update_id"]
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        if not leaves:
            break
        path = draw(st.sampled_from(leaves))
        old = _get(update, path)
        if isinstance(old, bool):
            new = draw(st.booleans())
        elif isinstance(old, int):
            new = draw(nasty_int)
        elif isinstance(old, str):
            new = draw(nasty_text)
        else:
            new = draw(json_scalars)
        _mutate(update, path, "replace", new)
    if draw(st.booleans()):
        update[draw(st.text(min_size=1, max_size=10))] = draw(json_values)  # unknown fields are allowed
    update["update_id"] = draw(st.integers(min_value=0, max_value=2**40))
    return update


def _get(node, path):
    for step in path:
        node = node[step]
    return node


random_updates = (
    typed_mutations()
    | mutated_updates()
    | st.dictionaries(
        st.sampled_from(
            ["update_id", "message", "edited_message", "callback_query", "my_chat_member", "channel_post", "poll"]
        ),
        json_values,
        max_size=3,
    )
    | json_values
)


def _body(update) -> str:
    return json.dumps(update, ensure_ascii=False, allow_nan=True)


def _check_http(response: dict) -> None:
    assert isinstance(response, dict)
    assert 200 <= response["statusCode"] < 500, response
    body = response.get("body") or ""
    json.loads(body)  # always a JSON answer
    assert not TRACEBACK.search(body), body


_http_statuses: dict[int, int] = {}


@pytest.fixture
def quiet_ingress(environment, monkeypatch):
    """The ingress with a recording sink (no turn processing)."""
    return ListSink()


@settings(HARDENING, max_examples=200)
@given(update=random_updates)
def test_random_updates_never_get_a_5xx(quiet_ingress, update):
    note(_body(update)[:500])
    response = webhook_function(quiet_ingress)(webhook_event(_body(update)), None)
    _check_http(response)
    _http_statuses[response["statusCode"]] = _http_statuses.get(response["statusCode"], 0) + 1
    record_figure("bad_input.updates.http_status_counts", {str(k): v for k, v in sorted(_http_statuses.items())})


@HARDENING
@given(raw=st.binary(max_size=300), encoded=st.booleans())
def test_random_bytes_bodies(quiet_ingress, raw, encoded):
    """Random bytes: base64 bodies with invalid UTF-8, and texts that are not JSON."""
    body = base64.b64encode(raw).decode("ascii") if encoded else raw.decode("utf-8", errors="replace")
    _check_http(webhook_function(quiet_ingress)(webhook_event(body, base64_body=encoded), None))


HAND_WRITTEN = [
    ("empty body", "", False, 400),
    ("whitespace", "   \n", False, 400),
    ("not JSON", "not json at all", False, 400),
    ("truncated JSON", '{"update_id": 5, "message": {"text": "hi"', False, 400),
    ("JSON array", "[1, 2, 3]", False, 400),
    ("JSON string", '"{\\"update_id\\": 1}"', False, 400),
    ("JSON null", "null", False, 400),
    ("update_id a string", '{"update_id": "7"}', False, 400),
    ("update_id a bool", '{"update_id": true}', False, 400),
    ("update_id a float", '{"update_id": 7.5}', False, 400),
    ("negative update_id", '{"update_id": -5, "message": {}}', False, 200),
    ("update_id 2**70", '{"update_id": 1180591620717411303424}', False, 200),
    ("NaN inside", '{"update_id": 9, "message": {"message_id": NaN}}', False, 200),
    ("deep nesting", '{"update_id": 9, "x": ' + "[" * 5000 + "]" * 5000 + "}", False, 400),
    (
        "invalid UTF-8 in base64",
        base64.b64encode(b'{"update_id": 1, "message": {"text": "\xff\xfe"}}').decode(),
        True,
        400,
    ),
    ("invalid base64", "@@@not base64@@@", True, 400),
    ("base64 of non-JSON", base64.b64encode(b"\x00\x01\x02").decode(), True, 400),
    ("lone surrogate", '{"update_id": 3, "message": {"text": "\\ud800"}}', False, 200),
    ("body of 1 MB + 1", '{"update_id": 1, "pad": "' + "a" * (MAX_BODY_BYTES - 25) + '"}', False, 413),
    ("base64 body over 1 MB", base64.b64encode(b" " * (MAX_BODY_BYTES + 1)).decode(), True, 413),
]


@pytest.mark.parametrize("name,body,encoded,status", HAND_WRITTEN, ids=[h[0] for h in HAND_WRITTEN])
def test_hand_written_bodies(quiet_ingress, name, body, encoded, status):
    response = webhook_function(quiet_ingress)(webhook_event(body, base64_body=encoded), None)
    _check_http(response)
    assert response["statusCode"] == status, (name, response)


@pytest.mark.parametrize(
    "event",
    [
        None,
        [],
        "x",
        5,
        {},
        {"headers": None},
        {"headers": {"x": 1}, "body": 5},
        {"headers": [["a", "b"]], "body": "{}"},
        {"headers": {"X-Telegram-Bot-Api-Secret-Token": SECRET}, "body": None},
        {"headers": {"X-Telegram-Bot-Api-Secret-Token": SECRET}, "body": {"a": 1}},
        {"headers": {"X-Telegram-Bot-Api-Secret-Token": SECRET}, "body": "{}", "isBase64Encoded": "yes"},
    ],
)
def test_malformed_api_gateway_events(quiet_ingress, event):
    _check_http(webhook_function(quiet_ingress)(event, None))


def test_every_update_type_gets_a_200(quiet_ingress):
    for update in VALID_UPDATES:
        response = webhook_function(quiet_ingress)(webhook_event(update), None)
        assert response["statusCode"] == 200, (update, response)


# ------------------------------------------------------------------ the same updates through the consumer
@pytest.fixture
def fuzz_bot(environment, fresh_memory, telegram):
    return make_bot(fresh_memory, telegram)


_outcomes: dict[str, int] = {"processed": 0}


def _kind(update) -> str:
    """How the consumer routes the update: unreadable, ignored, text, command, callback, member, non_text."""
    try:
        return route(parse_update(update), "sommelier_test_bot").kind
    except UpdateError:
        return "unreadable"


def _assert_nothing_sent_has_a_traceback(telegram) -> None:
    for call in telegram.calls:
        for key in ("text", "caption"):
            value = call.params.get(key)
            if isinstance(value, str):
                assert not TRACEBACK.search(value), value[:500]


@settings(HARDENING, max_examples=150)
@given(update=typed_mutations() | mutated_updates())
def test_mutated_updates_through_the_consumer(fuzz_bot, telegram, update):
    note(_body(update)[:500])
    kind = _kind(update)
    event(kind)
    fuzz_bot.process(update, attempt=1)  # a malformed update is never worth a retry: nothing may escape
    _outcomes["processed"] += 1
    _outcomes[kind] = _outcomes.get(kind, 0) + 1
    record_figure("bad_input.updates.consumer_kinds", dict(_outcomes))
    _assert_nothing_sent_has_a_traceback(telegram)


def test_every_update_type_through_the_consumer(fuzz_bot, telegram):
    for update in VALID_UPDATES:
        fuzz_bot.process(copy.deepcopy(update), attempt=1)
    _assert_nothing_sent_has_a_traceback(telegram)
    assert all(c.http_status == 200 for c in telegram.calls if c.method in ("sendMessage", "sendPhoto")), [
        (c.method, c.response) for c in telegram.calls if c.http_status != 200
    ]
