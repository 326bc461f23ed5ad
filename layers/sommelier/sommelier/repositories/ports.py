"""The data ports: what the agent, the bot, the shop's duties and the CLI need from the catalogue, the
conversation store and the shop's records.

Two adapters implement them (repositories/adapters.py): in process (psycopg, local runs and tests) and Lambda
invoke (in AWS, where only the tool function holds database credentials). Every method takes and answers
domain objects (sommelier.domain); failures raise sommelier.domain.errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from sommelier.domain.errors import PortError

if TYPE_CHECKING:
    from sommelier.domain.catalog import CatalogStats, ExportedWine
    from sommelier.domain.catalog_writes import EmbeddingText, ImportSummary, WineEmbedding
    from sommelier.domain.conversation import (
        ChatMessage,
        ChatState,
        FeedbackResult,
        TurnEnd,
        TurnOpening,
        TurnRecord,
        TurnStart,
        UserInfo,
        UserUpsert,
    )
    from sommelier.domain.records import ImportRow
    from sommelier.domain.search import SearchFilters, SearchResult, SemanticRequest, ToolRequest, WineList
    from sommelier.domain.shop import AdminStats, ForgetResult, FoundWines, ReportData, WineCard
    from sommelier.domain.shop_facts import ShopFacts
    from sommelier.domain.taste import TasteProfile
    from sommelier.domain.wine import Wine, WineListing


class InvocationCounter:
    """Counts tool-function invocations (in-process: the operations that would be one each)."""

    def __init__(self) -> None:
        self.count = 0


class CatalogRepository(Protocol):
    counter: InvocationCounter

    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[SearchResult | PortError]:
        """Run the model's tool calls together; each answers a result or its own port error."""
        ...

    def search_wines(self, filters: SearchFilters) -> SearchResult: ...

    def semantic_search(self, request: SemanticRequest) -> SearchResult: ...

    def get_wines(self, ids: Sequence[str]) -> WineList: ...

    def fallback_list(self, *, limit: int, exclude_ids: Sequence[str] = ()) -> list[Wine]: ...

    def stats(self) -> CatalogStats: ...

    def export_wines(self, *, include_unavailable: bool = False) -> list[ExportedWine]: ...

    def list_wines(self, *, include_unavailable: bool = False, limit: int = 1000) -> list[WineListing]: ...

    def import_wines(
        self, rows: Sequence[ImportRow], *, replace: bool = False, replace_since: str | None = None
    ) -> ImportSummary: ...

    def embedding_texts(self) -> list[EmbeddingText]: ...

    def update_embeddings(self, model: str, items: Sequence[WineEmbedding]) -> int: ...


class ChatRepository(Protocol):
    """The conversation store: users, the history, turns, votes and the Telegram photo cache."""

    counter: InvocationCounter

    def begin_turn(self, chat_id: int, *, user: UserInfo | None, history_limit: int) -> TurnStart: ...

    def open_turn(
        self, chat_id: int, *, user: UserInfo | None, history_limit: int, searches: Sequence[ToolRequest]
    ) -> TurnOpening:
        """begin_turn and the prefetch's searches in one invocation: ``results`` holds each search's result or
        its port error, in order (None: the searches were not run; the caller runs them itself)."""
        ...

    def end_turn(self, record: TurnRecord | None, *, wine_ids: Sequence[str]) -> TurnEnd: ...

    def history(self, chat_id: int, limit: int = 10) -> list[ChatMessage]: ...

    def upsert_user(self, user: UserInfo) -> UserUpsert: ...

    def reset_history(self, chat_id: int) -> int: ...

    def move_chat(self, from_chat_id: int, to_chat_id: int) -> int:
        """A group that became a supergroup: its history, votes and members under the new id (messages moved)."""
        ...

    def set_active(self, chat_id: int, active: bool, *, user_id: int | None = None) -> int: ...

    def chat_state(self, user_id: int) -> list[ChatState]: ...

    def save_feedback(
        self, *, chat_id: int, user_id: int, rating: int, message_id: int | None, wine_id: str | None = None
    ) -> FeedbackResult: ...

    def taste_profile(self, user_id: int) -> TasteProfile:
        """What the customer's votes and words taught of their taste (domain/taste.py); empty when nothing."""
        ...

    def remember_photo(self, wine_id: str, file_id: str) -> None:
        """A Telegram file id learned while delivering; may be written later (with the next end_turn)."""
        ...


class ShopRepository(Protocol):
    """The shop's duties: the age answer, forgetting a customer, retention, wine cards, the report."""

    counter: InvocationCounter

    def get_age_answer(self, user_id: int) -> bool | None: ...

    def shop_facts(self) -> ShopFacts | None:
        """The owner's shop file as kept (docs/shop.md); None when none is set."""
        ...

    def put_shop_facts(self, facts: ShopFacts | None) -> ShopFacts | None:
        """Replace the shop's facts whole (None removes them); answers what is kept."""
        ...

    def save_age_answer(self, user_id: int, is_adult: bool) -> None: ...

    def forget_user(self, user_id: int) -> ForgetResult: ...

    def purge_old_messages(self, days: int) -> int: ...

    def find_wines(self, refs: Sequence[str]) -> FoundWines: ...

    def wine_card(self, ref: str) -> WineCard: ...

    def report_data(self, since: str, until: str) -> ReportData: ...

    def admin_stats(self) -> AdminStats: ...
