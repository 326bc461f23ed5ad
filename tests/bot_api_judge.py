"""An independent judge of the Bot API calls the bot made: aiogram's method models plus the documented limits.

It shares no code with the bot (it imports aiogram, never `sommelier`): each call the fake Bot API
received is read into aiogram's model of that method (`aiogram.methods.SendMessage`...), and a parameter
the model does not know is a violation too (aiogram itself lets unknown ones through). The limits are
those of devsets/telegram/LIMITS.md: 4096 characters of text and 1024 of caption (UTF-16 units, after
entity parsing), callback data of 1-64 bytes, no chat action in a channel's direct-messages chat, no
draft outside private chats, never message_thread_id 1 (the General topic).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
CALLBACK_DATA_BYTES = (1, 64)
RAW_TEXT_BYTES = 1 << 15  # the server refuses a longer text before parsing it


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _model(method: str) -> type | None:
    # aiogram builds ~8 s of pydantic models on import: only the tests that judge a call pay for it, not the
    # collection of every test
    import aiogram.methods

    return getattr(aiogram.methods, method[:1].upper() + method[1:], None)


def _known(model: type) -> set[str]:
    names: set[str] = set()
    for name, info in model.model_fields.items():  # type: ignore[attr-defined]
        names.add(name)
        if info.alias:
            names.add(info.alias)
    return names


def _buttons(markup: Any) -> list[dict[str, Any]]:
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    return [b for row in rows or [] if isinstance(row, list) for b in row if isinstance(b, dict)]


def violations(
    method: str,
    params: dict[str, Any],
    *,
    files: dict[str, bytes] | None = None,
    result: Any = None,
    direct_chats: frozenset[int] = frozenset(),
) -> list[str]:
    """What is wrong with one call, by aiogram's models and the documented limits (empty: nothing)."""
    model = _model(method)
    if model is None:
        return [f"{method}: not a Bot API method"]
    payload = dict(params)
    for name in files or {}:
        payload.setdefault(name, f"attach://{name}")  # an upload: the model takes a file or a string
    found = [f"{method}: unknown parameter {name!r}" for name in sorted(set(payload) - _known(model))]
    try:
        model.model_validate(payload)  # type: ignore[attr-defined]
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"])
            found.append(f"{method}: {where}: {error['msg']}")
    found += _limits(method, params, result, direct_chats)
    return found


def _limits(method: str, params: dict[str, Any], result: Any, direct_chats: frozenset[int]) -> list[str]:
    found: list[str] = []
    chat = params.get("chat_id")
    text = params.get("text")
    if isinstance(text, str) and len(text.encode("utf-8")) > RAW_TEXT_BYTES:
        found.append(f"{method}: text over {RAW_TEXT_BYTES} bytes")
    if isinstance(result, dict):
        if _units(result.get("text") or "") > TEXT_LIMIT:
            found.append(f"{method}: text over {TEXT_LIMIT} characters")
        if _units(result.get("caption") or "") > CAPTION_LIMIT:
            found.append(f"{method}: caption over {CAPTION_LIMIT} characters")
    for button in _buttons(params.get("reply_markup")):
        data = button.get("callback_data")
        if data is not None and not (CALLBACK_DATA_BYTES[0] <= len(str(data).encode()) <= CALLBACK_DATA_BYTES[1]):
            found.append(f"{method}: callback_data of {len(str(data).encode())} bytes")
    if params.get("message_thread_id") == 1:
        found.append(f"{method}: message_thread_id 1 (the General topic takes none)")
    if chat in direct_chats:
        if method == "sendChatAction":
            found.append("sendChatAction in a channel's direct-messages chat")
        elif method.startswith("send") and params.get("direct_messages_topic_id") is None:
            found.append(f"{method}: no direct_messages_topic_id in a direct-messages chat")
    if method == "sendMessageDraft" and (not isinstance(chat, int) or chat < 0):
        found.append("sendMessageDraft outside a private chat")
    return found
