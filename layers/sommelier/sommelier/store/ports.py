"""The data ports: what the agent, the bot and the CLI need from the catalogue and the chat store.

Two adapters implement both (repositories/adapters.py): in-process (psycopg, local runs and tests)
and Lambda invoke (in AWS, where only the tool function holds database credentials). Failures
raise repositories.errors; results are JSON-ready dicts, the tool function's wire format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

Wine = dict[str, Any]
PHOTO_KEYS = ("image_key", "telegram_file_id")  # what a wine card needs beyond the tools' view of a wine


def wines_with_photos(result: dict[str, Any]) -> list[Wine]:
    """A search or list result's wines with the photo keys it carries beside them (its "photos")."""
    photos = result.get("photos")
    photos = photos if isinstance(photos, dict) else {}
    return [{**wine, **photos.get(wine.get("id"), {})} for wine in result.get("wines") or [] if isinstance(wine, dict)]


Message = dict[str, Any]


@dataclass
class UserInfo:
    """Who wrote: enough to keep the users table current."""

    telegram_user_id: int
    chat_id: int
    username: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    language_code: str | None = None

    def as_arguments(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TurnRecord:
    """A successful turn to store: the user's text and the rendered answer."""

    chat_id: int
    user_text: str
    answer_text: str
    user_id: int | None = None
    update_id: int | None = None
    wine_ids: list[str] = field(default_factory=list)
    response_type: str | None = None
    stats: dict[str, Any] | None = None  # mode and LLM usage, kept without ids for the report

    def as_arguments(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TurnStart:
    user: dict[str, Any] | None
    history: list[Message]


@dataclass
class TurnEnd:
    saved: dict[str, Any] | None
    wines: list[Wine]
    missing: list[str]


@dataclass
class ToolRequest:
    """One LLM tool call as the tool function receives it: {"tool": name, "arguments": {...}}."""

    tool: str
    arguments: dict[str, Any]


class InvocationCounter:
    """Counts tool-function invocations (in-process: the operations that would be one each)."""

    def __init__(self) -> None:
        self.count = 0


class CatalogRepository(Protocol):
    counter: InvocationCounter

    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[dict[str, Any] | Exception]:
        """Run the model's tool calls together; each answers a result or its own port error."""
        ...

    def search_wines(self, arguments: dict[str, Any]) -> dict[str, Any]: ...

    def semantic_search(self, arguments: dict[str, Any]) -> dict[str, Any]: ...

    def get_wines(self, ids: Sequence[str]) -> dict[str, Any]: ...

    def fallback_list(self, *, limit: int, exclude_ids: Sequence[str] = ()) -> list[Wine]: ...

    def stats(self) -> dict[str, Any]: ...

    def export_wines(self, *, include_unavailable: bool = False) -> list[dict[str, Any]]: ...

    def list_wines(self, *, include_unavailable: bool = False, limit: int = 1000) -> list[dict[str, Any]]: ...

    def import_wines(
        self, rows: list[dict[str, Any]], *, replace: bool = False, replace_since: str | None = None
    ) -> dict[str, Any]: ...

    def embedding_texts(self) -> list[dict[str, Any]]: ...

    def update_embeddings(self, model: str, items: list[dict[str, Any]]) -> dict[str, Any]: ...


class ChatRepository(Protocol):
    counter: InvocationCounter

    def begin_turn(self, chat_id: int, *, user: UserInfo | None, history_limit: int) -> TurnStart: ...

    def end_turn(self, record: TurnRecord | None, *, wine_ids: Sequence[str]) -> TurnEnd: ...

    def history(self, chat_id: int, limit: int = 10) -> list[Message]: ...

    def upsert_user(self, user: UserInfo) -> dict[str, Any]: ...

    def reset_history(self, chat_id: int) -> int: ...

    def set_active(self, chat_id: int, active: bool, *, user_id: int | None = None) -> int: ...

    def chat_state(self, user_id: int) -> list[dict[str, Any]]: ...

    def save_feedback(
        self, *, chat_id: int, user_id: int, rating: int, message_id: int | None, wine_id: str | None = None
    ) -> dict[str, Any]:
        """The vote, and whether it replaced a different one: {"rating", "previous_rating", "changed"}."""
        ...

    def remember_photo(self, wine_id: str, file_id: str) -> None:
        """A Telegram file id learned while delivering; may be written later (with the next end_turn)."""
        ...


class ShopRepository(Protocol):
    """The shop's duties: the age answer, forgetting a customer, retention, wine cards, the report."""

    counter: InvocationCounter

    def get_age_answer(self, user_id: int) -> bool | None: ...

    def save_age_answer(self, user_id: int, is_adult: bool) -> None: ...

    def forget_user(self, user_id: int) -> dict[str, Any]: ...

    def purge_old_messages(self, days: int) -> int: ...

    def find_wines(self, refs: Sequence[str]) -> dict[str, Any]: ...

    def wine_card(self, ref: str) -> dict[str, Any]: ...

    def report_data(self, since: str, until: str) -> dict[str, Any]: ...

    def admin_stats(self) -> dict[str, Any]: ...
