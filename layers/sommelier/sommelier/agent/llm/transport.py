"""One HTTP request to the chat endpoint, on the openai SDK: a stream checked to be Server-Sent Events (read
by agent.llm.stream, with a watchdog that can cut it), or a whole completion cut off when its time is up.
An HTML page (a gateway's, a captive portal's, a wrong base URL's web UI) is never taken for an answer.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Generator
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import httpx2

from sommelier.agent.llm.port import LLMReply, ToolCall, UnusableEndpoint
from sommelier.agent.llm.reply import normalise_message
from sommelier.domain.conversation import Deadline

if TYPE_CHECKING:  # the SDK loads with the first OpenAIChat
    import openai

logger = logging.getLogger(__name__)


def open_stream(client: openai.OpenAI, request: dict[str, Any], timeout: float) -> Any:
    """A streamed completion whose response is checked to be the API's."""
    # No per-read stall limit here: keep-alive comments would reset it, and a reasoning model may think
    # silently before its first token. read_stream times the data itself.
    stream = client.chat.completions.create(**request, timeout=httpx2.Timeout(timeout))
    try:
        check_stream_body(stream.response)
    except UnusableEndpoint:
        stream.close()
        raise
    return stream


def whole_completion(client: openai.OpenAI, request: dict[str, Any], timeout: float) -> Any:
    """A non-streamed completion, cut off when its time is up even if the provider keeps the response
    alive with a trickle of bytes (httpx's timeouts are per read, not per response)."""
    import openai

    sent = time.monotonic()
    with client.chat.completions.with_streaming_response.create(**request, timeout=timeout) as response:
        expired = threading.Event()

        def cut_off() -> None:
            expired.set()
            try:
                response.close()
            except Exception as exc:  # closing from the watchdog thread: best effort
                logger.debug("closing a late response failed: %s", exc)

        watchdog = threading.Timer(max(0.0, timeout - (time.monotonic() - sent)), cut_off)
        watchdog.daemon = True
        watchdog.start()
        try:
            check_content_type(response.headers.get("content-type", ""), streaming=False)
            return response.parse()
        except (json.JSONDecodeError, ValueError) as exc:
            if expired.is_set():
                raise openai.APITimeoutError(request=response.http_request) from exc
            if response.http_response.text.lstrip()[:1] == "<":
                raise UnusableEndpoint("the body is an HTML page, not JSON") from exc
            raise
        except Exception as exc:
            if expired.is_set():
                raise openai.APITimeoutError(request=response.http_request) from exc
            raise
        finally:
            watchdog.cancel()


def read_streamed(
    completion: Any,
    *,
    model: str,
    deadline: Deadline,
    stall_s: float,
    first_token_s: float | None,
    tool_names: set[str] | None,
) -> Generator[str, None, LLMReply]:
    """The stream's content deltas, then its joined reply with the same hygiene as a whole answer (ids, text
    tool calls, <think>)."""
    from sommelier.agent.llm.stream import read_stream  # imports jiter only where streams are read

    reply = yield from read_stream(
        completion,
        model=model,
        deadline=deadline.ends_at - deadline.fallback_reserve_s,
        close=lambda: cut(completion),
        clock=time.monotonic,
        stall_s=stall_s,
        first_token_s=first_token_s,
    )
    message = normalise_message(
        SimpleNamespace(
            content=reply.content,
            tool_calls=[
                SimpleNamespace(id=c.id, function=SimpleNamespace(name=c.name, arguments=c.arguments))
                for c in reply.tool_calls
            ],
        ),
        tool_names,
    )
    reply.content = message.content
    reply.tool_calls = [ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls]
    reply.reasoning = "\n".join(part for part in (reply.reasoning, message.reasoning) if part) or None
    return reply


def cut(stream: Any) -> None:
    """End a stream from the watchdog's thread: a read blocked on a silent socket wakes only when the socket
    is shut down (closing the response does not interrupt it)."""
    import socket

    network = getattr(getattr(stream, "response", None), "extensions", {}).get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError as exc:  # already closed
            logger.debug("shutting the stream's socket down failed: %s", exc)
    stream.close()


def check_stream_body(response: Any) -> None:
    """A stream's response that is not Server-Sent Events: an HTML page (by its type or its first byte) is
    not the API. Anything else is left to the stream's reader."""
    content_type = response.headers.get("content-type", "")
    check_content_type(content_type, streaming=True)
    if "event-stream" not in content_type.lower() and response.read()[:512].lstrip()[:1] == b"<":
        raise UnusableEndpoint(f"the stream is an HTML page ({content_type or 'no content type'}), not the API")


def check_content_type(content_type: str, *, streaming: bool) -> None:
    """An HTML page is not an answer."""
    if "html" in content_type.lower():
        shape = "stream" if streaming else "answer"
        raise UnusableEndpoint(f"the {shape} is an HTML page ({content_type}), not the API")
