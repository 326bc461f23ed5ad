"""What one turn carries: the caller's request and the result it gets back, the trace of what the turn did
(for its metadata and metrics), an LLM turn under way, and the offline responder the chain falls back to.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sommelier.agent.answer_checks import ShopVoice
from sommelier.agent.llm.port import ChatLLM, LLMLedger, LLMMessage, LLMReply
from sommelier.agent.prefetch import Opening
from sommelier.agent.streaming import AnswerPiece, Shown
from sommelier.domain.answer import SommelierResponse
from sommelier.domain.conversation import ChatMessage, Deadline, SavedTurn
from sommelier.domain.request_fit import RequestFit
from sommelier.domain.search import ToolRequest
from sommelier.domain.shop_facts import ShopFacts
from sommelier.domain.taste import TasteNote, TasteProfile
from sommelier.domain.wine import Wine

Found = dict[str, Wine]  # the wines the tools returned this turn, by id (each with found_by)
Turn = Generator[AnswerPiece, None, "TurnResult"]
Call = Generator[AnswerPiece, None, LLMReply]


class FallbackAnswer(Protocol):
    response: SommelierResponse
    found_wines: list[Wine]
    tool_calls: list[dict[str, Any]]
    error: str | None


class Fallback(Protocol):
    """The rule-based responder that answers when the LLM cannot (sommelier.offline.OfflineResponder)."""

    def respond(
        self,
        text: str,
        history: list[ChatMessage] | None = None,
        exclude_ids: list[str] | None = None,
        *,
        taste: TasteProfile | None = None,
    ) -> FallbackAnswer: ...

    def candidate_searches(
        self,
        text: str,
        history: list[ChatMessage] | None = None,
        exclude_ids: list[str] | None = None,
        *,
        embedded: bool = True,
    ) -> list[ToolRequest]: ...

    def table_ids(self, text: str, history: list[ChatMessage] | None = None) -> list[str]: ...


@dataclass
class TurnRequest:
    text: str
    chat_id: int
    user_id: int | None = None
    update_id: int | None = None
    profile: Mapping[str, object] | None = None
    exclude_ids: list[str] = field(default_factory=list)
    save: bool = True
    deadline: Deadline | None = None  # default: LLM_TURN_BUDGET_S from now
    shown: Shown | None = None  # what the customer already has from this update (a redelivery); streamed turns
    history: list[ChatMessage] | None = None  # loaded by the caller's begin_turn; None: the agent loads it
    invocations_at_start: int | None = None  # the counter before the caller's begin_turn
    image: str | None = None  # a photo the customer sent (a data URL), shown to a model that sees images
    shop: ShopFacts | None = None  # the owner's shop file (begin_turn/open_turn load it); None: none is set
    opening: Opening | None = None  # the prefetch's searches, run with the caller's open_turn
    use_llm: bool = True  # False: a spending limit was reached (telegram/limits.py), the offline responder answers
    taste: TasteProfile | None = None  # the customer's remembered taste: ranks the wines that fit (domain/taste.py)
    taste_note: TasteNote | None = None  # what this message says of their taste, learnt when the turn is saved


@dataclass
class TurnResult:
    response: SommelierResponse
    text: str
    found_wines: Found
    metadata: dict[str, Any]
    saved: SavedTurn | None = None
    wines: dict[str, Wine] | None = None  # the shown wines from end_turn; None: not loaded

    @property
    def assistant_message_id(self) -> int | None:
        return self.saved.assistant_message_id if self.saved is not None else None


@dataclass
class TurnTrace:
    """What one turn did, for metadata and metrics."""

    started: float = field(default_factory=time.perf_counter)
    mode: str = "llm"
    model: str | None = None
    deadline: Deadline = field(default_factory=lambda: Deadline.after(60.0))
    ledger: LLMLedger = field(default_factory=LLMLedger)
    tool_rounds: int = 0
    tools_used: list[str] = field(default_factory=list)
    tool_errors: list[str] = field(default_factory=list)
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    stages_ms: dict[str, float] = field(default_factory=dict)
    prefetched: int | None = None  # candidates put in the first call's prompt (None: no prefetch)
    corrections: list[str] = field(default_factory=list)  # what was held to the request (agent.fitting)

    def add_stage(self, name: str, since: float) -> None:
        self.stages_ms[name] = round(self.stages_ms.get(name, 0.0) + (time.perf_counter() - since) * 1000, 2)


@dataclass
class OnlineTurn:
    """One LLM turn under way: the model, the conversation sent to it, what the tools found, what was shown."""

    llm: ChatLLM
    request: TurnRequest
    trace: TurnTrace
    messages: list[LLMMessage]
    found: Found = field(default_factory=dict)
    streamed: bool = False  # the answer is shown while it streams
    fit: RequestFit = RequestFit()  # what the request binds the answer to (agent.fitting)
    shop: ShopVoice = field(default_factory=ShopVoice)  # what the shop itself may say (agent.answer_checks)
