"""Inline buttons' callback data, one grammar for every button: `<prefix>:<field>:<field>…`.

Each kind of button is a named tuple of its fields and a `CallbackData` that packs it (`pack`, at most
Telegram's 64 bytes: checked here and nowhere else) and reads it back (`unpack`: None for anything it did not
pack, so a foreign, malformed or tampered button is answered politely, never with an exception). The route
table sends a button to the route of its prefix (`prefix_of`).

Fields are `int`, `str` (non-empty, without ':'), `bool` ("1" / "0") or a `Literal` of ints or strings.
Trailing fields that hold their default are left off, so a field added at the end with a default keeps the
buttons already in customers' chats working.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, TypeVar

LIMIT = 64  # bytes: Telegram refuses longer callback_data
SEPARATOR = ":"
_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,19}")  # as str(int) writes it: one spelling per number

R = TypeVar("R", bound=tuple[Any, ...])


class CallbackDataError(ValueError):
    """A button whose data cannot be packed: a field value outside its type, or more than 64 bytes."""


class _Field(NamedTuple):
    name: str
    read: Callable[[str], object]  # the text of the field -> its value; ValueError when it is not one
    write: Callable[[object], str]
    default: object
    optional: bool


def _text(text: str) -> str:
    if not text or SEPARATOR in text:
        raise ValueError(f"a text field must be non-empty and contain no {SEPARATOR!r}")
    return text


def _integer(text: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise ValueError("not an integer")
    return int(text)


def _flag(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError("a flag is 1 or 0")
    return text == "1"


def _write_integer(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("not an integer")
    return str(value)


def _write_flag(value: object) -> str:
    if not isinstance(value, bool):
        raise ValueError("a flag is True or False")
    return "1" if value else "0"


def _write_text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("not a text")
    return _text(value)


def _choice(allowed: tuple[object, ...]) -> tuple[Callable[[str], object], Callable[[object], str]]:
    by_text = {str(value): value for value in allowed}

    def read(text: str) -> object:
        if text not in by_text:
            raise ValueError(f"one of {', '.join(by_text)}")
        return by_text[text]

    def write(value: object) -> str:
        if isinstance(value, bool) or value not in allowed:
            raise ValueError(f"one of {', '.join(by_text)}")
        return str(value)

    return read, write


def _coders(annotation: object) -> tuple[Callable[[str], object], Callable[[object], str]]:
    if annotation is bool:
        return _flag, _write_flag
    if annotation is int:
        return _integer, _write_integer
    if annotation is str:
        return _text, _write_text
    if typing.get_origin(annotation) is typing.Literal:
        return _choice(typing.get_args(annotation))
    raise TypeError(f"a callback data field is int, str, bool or a Literal, not {annotation!r}")


class CallbackData(Generic[R]):
    """The callback data of one kind of button: ``prefix`` and the fields of the named tuple ``kind``."""

    __slots__ = ("prefix", "kind", "_build", "_fields")

    def __init__(self, prefix: str, kind: type[R]) -> None:
        if not prefix or SEPARATOR in prefix:
            raise ValueError(f"a prefix is non-empty and contains no {SEPARATOR!r}")
        self.prefix = prefix
        self.kind = kind
        self._build: Callable[..., R] = kind  # the named tuple, from its fields in order
        self._fields: tuple[_Field, ...] | None = None

    @property
    def fields(self) -> tuple[_Field, ...]:
        """The kind's fields with their coders, read from its annotations when first needed."""
        if self._fields is None:
            hints = typing.get_type_hints(self.kind)
            defaults: dict[str, object] = getattr(self.kind, "_field_defaults", {})
            names: tuple[str, ...] = getattr(self.kind, "_fields", ())
            self._fields = tuple(
                _Field(name, *_coders(hints[name]), defaults.get(name), name in defaults) for name in names
            )
        return self._fields

    def pack(self, value: R) -> str:
        """The button's callback data; CallbackDataError when a field is not of its type or it is too long."""
        fields = self.fields
        kept = len(fields)
        while kept and fields[kept - 1].optional and value[kept - 1] == fields[kept - 1].default:
            kept -= 1  # trailing defaults stay off the wire
        try:
            texts = [field.write(item) for field, item in zip(fields[:kept], value[:kept], strict=True)]
        except ValueError as exc:
            raise CallbackDataError(f"{self.prefix}: {exc}") from None
        data = SEPARATOR.join((self.prefix, *texts))
        if len(data.encode("utf-8")) > LIMIT:
            raise CallbackDataError(f"{self.prefix}: callback data is at most {LIMIT} bytes, got {data!r}")
        return data

    def unpack(self, data: str | None) -> R | None:
        """The button this data packs, or None for anything else (another kind, malformed, foreign)."""
        if not data:
            return None
        prefix, *texts = data.split(SEPARATOR)
        fields = self.fields
        required = sum(1 for field in fields if not field.optional)
        if prefix != self.prefix or not required <= len(texts) <= len(fields):
            return None
        try:
            values = [field.read(text) for field, text in zip(fields, texts, strict=False)]
        except ValueError:
            return None
        values += [field.default for field in fields[len(texts) :]]
        return self._build(*values)


def prefix_of(data: str | None) -> str:
    """The prefix a button's data starts with ("" for none): the route table's key."""
    return (data or "").partition(SEPARATOR)[0]
