"""Tests for tests/fakes/openai_server.py, driven through the real openai SDK."""

from __future__ import annotations

import base64
import json
import math
import struct
import threading

import openai
import pytest

from tests.fakes.openai_server import (
    FakeOpenAI,
    Step,
    delayed,
    deterministic_embedding,
    drop_connection,
    drop_mid_body,
    embeddings_vectors,
    error,
    json_response,
    malformed,
    reply,
    tool_calls,
)

MESSAGES = [{"role": "user", "content": "Recommend a red wine for steak"}]


@pytest.fixture
def fake():
    with FakeOpenAI() as f:
        yield f


@pytest.fixture
def client(fake):
    c = openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0, timeout=5)
    yield c
    c.close()


def chat(client, **kw):
    kw.setdefault("model", "gpt-4o-mini")
    kw.setdefault("messages", MESSAGES)
    return client.chat.completions.create(**kw)


# --------------------------------------------------------------------------- basics


def test_base_url_is_loopback_v1(fake):
    assert fake.base_url.startswith("http://127.0.0.1:")
    assert fake.base_url.endswith("/v1")
    assert int(fake.base_url.split(":")[2].split("/")[0]) > 0


def test_reply(fake, client):
    fake.script(reply("Try a Malbec.", prompt_tokens=11, completion_tokens=4))
    resp = chat(client, model="gpt-4o")
    assert resp.object == "chat.completion"
    assert resp.model == "gpt-4o"
    assert resp.choices[0].message.role == "assistant"
    assert resp.choices[0].message.content == "Try a Malbec."
    assert resp.choices[0].message.refusal is None
    assert resp.choices[0].finish_reason == "stop"
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (11, 4, 15)


def test_reply_estimated_usage_finish_reason_and_refusal(fake, client):
    fake.script(reply("x" * 9, finish_reason="length"), reply(None, refusal="I can't help with that."))
    r1 = chat(client)
    assert r1.choices[0].finish_reason == "length"
    assert r1.usage.prompt_tokens == math.ceil(len(json.dumps(MESSAGES)) / 4)
    assert r1.usage.completion_tokens == 3
    assert r1.usage.total_tokens == r1.usage.prompt_tokens + 3
    r2 = chat(client)
    assert r2.choices[0].message.content is None
    assert r2.choices[0].message.refusal == "I can't help with that."


def test_keep_alive_reuses_connection(fake, client):
    fake.script(*[reply(f"r{i}") for i in range(5)])
    assert [chat(client).choices[0].message.content for _ in range(5)] == [f"r{i}" for i in range(5)]
    assert fake.pending == 0
    assert fake.connections_accepted == 1


def test_tool_calls_parsed_by_sdk(fake, client):
    fake.script(
        tool_calls(("search_wines", {"query": "Côtes du Rhône", "max_price": 20}), ("get_pairing", "{not json"))
    )
    resp = chat(client, tools=[{"type": "function", "function": {"name": "search_wines", "parameters": {}}}])
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls
    assert [c.id for c in calls] == ["call_1", "call_2"]
    assert all(c.type == "function" for c in calls)
    assert calls[0].function.name == "search_wines"
    assert json.loads(calls[0].function.arguments) == {"query": "Côtes du Rhône", "max_price": 20}
    assert "Côtes" in calls[0].function.arguments  # ensure_ascii=False
    assert calls[1].function.name == "get_pairing"
    assert calls[1].function.arguments == "{not json"
    assert fake.tools_in_request(0) == ["search_wines"]


def test_streaming_reply_and_tool_calls(fake, client):
    fake.script(reply("A long answer about Barolo and Barbaresco."), tool_calls(("search", {"q": "x"})))
    chunks = list(chat(client, stream=True, stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "A long answer about Barolo and Barbaresco."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0

    chunks = list(chat(client, stream=True))
    deltas = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert deltas[0].function.name == "search" and deltas[0].id == "call_1"
    assert "".join(d.function.arguments or "" for d in deltas) == '{"q": "x"}'


# --------------------------------------------------------------------------- errors


def test_error_500(fake, client):
    fake.script(error(500, "boom"))
    with pytest.raises(openai.InternalServerError) as ei:
        chat(client)
    assert ei.value.status_code == 500
    assert ei.value.body["message"] == "boom"
    assert ei.value.body["type"] == "server_error"


def test_error_429_with_retry_after_and_code(fake, client):
    fake.script(error(429, "slow down", retry_after=1.5, code="custom_code"), error(400, "bad"))
    with pytest.raises(openai.RateLimitError) as ei:
        chat(client)
    assert ei.value.response.headers["retry-after"] == "1.5"
    assert ei.value.code == "custom_code"
    assert ei.value.body["message"] == "slow down"
    with pytest.raises(openai.BadRequestError):
        chat(client)


def test_sdk_retries_honour_retry_after(fake):
    fake.script(error(429, retry_after=0.05), error(503, retry_after=0.05), reply("finally"))
    with openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=2) as c:
        assert chat(c).choices[0].message.content == "finally"
    assert len(fake.chat_requests) == 3


def test_malformed_json(fake, client):
    fake.script(malformed(b'{"id": "x", "choices": [', status=200))
    with pytest.raises(json.JSONDecodeError):
        chat(client)
    # the connection is still usable afterwards (correct Content-Length)
    fake.script(malformed("not json at all", status=500, content_type="text/plain"), reply("ok"))
    with pytest.raises(openai.InternalServerError):
        chat(client)
    assert chat(client).choices[0].message.content == "ok"


def test_json_response_escape_hatch(fake, client):
    fake.script(json_response({"error": {"message": "nope"}}, status=403, headers={"x-extra": "1"}))
    with pytest.raises(openai.PermissionDeniedError) as ei:
        chat(client)
    assert ei.value.response.headers["x-extra"] == "1"


def test_drop_connection(fake, client):
    fake.script(drop_connection(), reply("after drop"))
    with pytest.raises(openai.APIConnectionError) as ei:
        chat(client)
    assert not isinstance(ei.value, openai.APITimeoutError)
    assert len(fake.chat_requests) == 1  # recorded before the drop
    assert chat(client).choices[0].message.content == "after drop"


def test_drop_mid_body(fake, client):
    fake.script(drop_mid_body(), reply("recovered"))
    with pytest.raises(openai.APIConnectionError):
        chat(client)
    assert chat(client).choices[0].message.content == "recovered"


def test_delayed_client_timeout(fake, client):
    fake.script(delayed(reply("too late"), 3.0), reply("fast"))
    with pytest.raises(openai.APITimeoutError):
        chat(client, timeout=0.2)
    # another request is served while the first handler still sleeps
    assert chat(client).choices[0].message.content == "fast"


def test_delayed_within_timeout(fake, client):
    fake.script(delayed(reply("worth the wait"), 0.1))
    assert chat(client).choices[0].message.content == "worth the wait"


def test_stop_returns_quickly_while_handler_sleeps():
    fake = FakeOpenAI().start()
    fake.script(delayed(reply("never"), 30))
    c = openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0, timeout=10)
    errors = []

    def call():
        try:
            chat(c)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    th = threading.Thread(target=call)
    th.start()
    fake.wait_for_requests(1)
    fake.stop()
    th.join(timeout=5)
    assert not th.is_alive()
    assert errors and isinstance(errors[0], openai.APIConnectionError)
    c.close()


# --------------------------------------------------------------------------- default / unscripted


def test_unscripted_returns_500_and_is_recorded(fake, client):
    with pytest.raises(openai.InternalServerError) as ei:
        chat(client)
    assert ei.value.body["message"] == "fake: no scripted response"
    assert len(fake.unscripted) == 1 and fake.unscripted[0].path == "/v1/chat/completions"


def test_default_callable(fake, client):
    seen = []

    def default(body):
        seen.append(body)
        return reply("echo: " + body["messages"][-1]["content"])

    fake.default = default
    fake.script(reply("scripted first"))
    assert chat(client).choices[0].message.content == "scripted first"
    assert chat(client).choices[0].message.content == "echo: " + MESSAGES[0]["content"]
    assert len(seen) == 1 and seen[0]["model"] == "gpt-4o-mini"
    assert fake.unscripted == []


def test_scripted_callable_and_raising_default(fake, client):
    fake.script(lambda body: reply(f"model={body['model']}"))
    assert chat(client).choices[0].message.content == "model=gpt-4o-mini"
    fake.default = lambda body: 1 / 0
    with pytest.raises(openai.InternalServerError) as ei:
        chat(client)
    assert "ZeroDivisionError" in ei.value.body["message"]


# --------------------------------------------------------------------------- embeddings


def test_embeddings_default_float_deterministic_unit_norm(fake, client):
    r1 = client.embeddings.create(
        model="text-embedding-3-small", input=["Pinot Noir", "Chablis"], encoding_format="float"
    )
    r2 = client.embeddings.create(model="text-embedding-3-small", input="Pinot Noir", encoding_format="float")
    v_pinot, v_chablis = r1.data[0].embedding, r1.data[1].embedding
    assert [d.index for d in r1.data] == [0, 1]
    assert len(v_pinot) == 1536
    assert r2.data[0].embedding == v_pinot
    assert v_chablis != v_pinot
    assert abs(math.sqrt(sum(x * x for x in v_pinot)) - 1.0) < 1e-5
    assert v_pinot == deterministic_embedding("Pinot Noir")
    assert r1.model == "text-embedding-3-small"
    assert r1.usage.prompt_tokens == r1.usage.total_tokens > 0


def test_embeddings_default_base64(fake, client):
    # SDK default: sends encoding_format="base64" and decodes it transparently
    r = client.embeddings.create(model="text-embedding-3-small", input=["Pinot Noir"])
    assert fake.embedding_requests[-1]["encoding_format"] == "base64"
    assert r.data[0].embedding == deterministic_embedding("Pinot Noir")
    # explicit base64: SDK returns the raw string; little-endian float32
    r = client.embeddings.create(model="text-embedding-3-small", input="Pinot Noir", encoding_format="base64")
    raw = base64.b64decode(r.data[0].embedding)
    assert list(struct.unpack(f"<{len(raw) // 4}f", raw)) == deterministic_embedding("Pinot Noir")


def test_embeddings_dimensions(client):
    with FakeOpenAI(embedding_dimensions=8) as f, f.client() as c:
        assert len(c.embeddings.create(model="m", input="a").data[0].embedding) == 8
        r = c.embeddings.create(model="m", input="a", dimensions=4, encoding_format="float")
        assert len(r.data[0].embedding) == 4
        assert abs(sum(x * x for x in r.data[0].embedding) - 1.0) < 1e-5


def test_embeddings_scripted(fake, client):
    fake.script_embeddings(
        embeddings_vectors([[1.0, 0.0], [0.5, 0.25]]),
        error(500, "emb down"),
        error(429, "emb slow"),
        drop_connection(),
        delayed(embeddings_vectors([[0.0, 1.0]]), 3),
    )
    r = client.embeddings.create(model="m", input=["a", "b"])
    assert [d.embedding for d in r.data] == [[1.0, 0.0], [0.5, 0.25]]
    with pytest.raises(openai.InternalServerError):
        client.embeddings.create(model="m", input="a")
    with pytest.raises(openai.RateLimitError):
        client.embeddings.create(model="m", input="a")
    with pytest.raises(openai.APIConnectionError):
        client.embeddings.create(model="m", input="a")
    with pytest.raises(openai.APITimeoutError):
        client.embeddings.create(model="m", input="a", timeout=0.2)
    assert fake.pending_embeddings == 0
    # queue empty again -> deterministic default; chat queue untouched
    r = client.embeddings.create(model="m", input="a", encoding_format="float")
    assert r.data[0].embedding == deterministic_embedding("a")
    assert len(fake.embedding_requests) == 6 and fake.chat_requests == []


# --------------------------------------------------------------------------- records & misc endpoints


def test_recorded_requests(fake, client):
    fake.script(reply("hi"))
    chat(client, temperature=0.2, tools=[{"type": "function", "function": {"name": "t1", "parameters": {}}}])
    client.embeddings.create(model="m", input="x")
    reqs = fake.requests
    assert [(r.method, r.path) for r in reqs] == [("POST", "/v1/chat/completions"), ("POST", "/v1/embeddings")]
    r0 = reqs[0]
    assert r0.headers["authorization"] == "Bearer test"
    assert r0.headers["content-type"] == "application/json"
    assert json.loads(r0.raw) == r0.body
    assert r0.body["temperature"] == 0.2 and r0.body["messages"] == MESSAGES
    assert r0.time <= reqs[1].time
    assert fake.last_chat_request() == r0.body
    assert fake.messages_in_request() == MESSAGES
    assert fake.embedding_requests == [reqs[1].body]

    fake.script(reply("left over"))
    fake.reset()
    assert fake.requests == [] and fake.chat_requests == [] and fake.embedding_requests == []
    assert fake.pending == 0


def test_models_and_unknown_path(fake, client):
    ids = [m.id for m in client.models.list()]
    assert "gpt-4o-mini" in ids
    assert client.models.retrieve("gpt-4o-mini").id == "gpt-4o-mini"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")
    with pytest.raises(openai.NotFoundError) as ei:
        client.post("/does/not/exist", cast_to=object, body={})
    assert "unknown path" in ei.value.body["message"]
    assert fake.requests[-1].path == "/v1/does/not/exist"


def test_concurrent_requests_thread_safe(fake):
    fake.default = lambda body: reply(body["messages"][0]["content"])
    results = []
    lock = threading.Lock()

    def worker(i):
        with fake.client() as c:
            for j in range(5):
                out = chat(c, messages=[{"role": "user", "content": f"{i}-{j}"}]).choices[0].message.content
                with lock:
                    results.append(out)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=5)
    assert sorted(results) == sorted(f"{i}-{j}" for i in range(8) for j in range(5))
    assert len(fake.chat_requests) == 40


def test_restart_gets_new_port():
    f = FakeOpenAI()
    with f:
        first = f.base_url
    f.stop()  # idempotent
    with f, f.client() as c:
        f.script(reply("again"))
        assert chat(c).choices[0].message.content == "again"
    assert isinstance(reply("x"), Step) and first.startswith("http://127.0.0.1:")
