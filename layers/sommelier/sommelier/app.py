"""The composition root: the real adapters, chosen by the settings (docs/architecture.md §1).

Each entry point builds its `Settings` and calls one builder here: `build_runtime` (the ports, the
agent, the dialog and the age gate), `build_router` (the conversation's routes and the shop's) and
`build_bot` (the Telegram consumer around them). Tests build theirs with their own repositories.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sommelier.agent.answer_checks import ShopVoice
from sommelier.agent.llm.port import ChatLLM
from sommelier.agent.loop import Fallback, SommelierAgent
from sommelier.agent.transcription import transcriber_from_settings
from sommelier.domain.pricing import LLMPrice, parse_price
from sommelier.embeddings import EmbeddingProvider, provider_from_settings
from sommelier.photos.store import PhotoStore, photo_store_from_settings
from sommelier.repositories.adapters import Repositories, repositories_from_settings
from sommelier.settings import Settings
from sommelier.shop import routes as shop_routes
from sommelier.shop.admin import notify_admin
from sommelier.shop.age_gate import AgeGate
from sommelier.telegram.consumer import TelegramBot
from sommelier.telegram.dialog import Dialog
from sommelier.telegram.limits import limits_from_settings
from sommelier.telegram.router import Router, customer_router
from sommelier.telegram.state import MessageLedger

logger = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    repositories: Repositories
    agent: SommelierAgent
    dialog: Dialog
    photos: PhotoStore
    age_gate: AgeGate

    @property
    def offline(self) -> bool:
        return self.agent.llm is None


def build_runtime(settings: Settings, *, repositories: Repositories | None = None) -> Runtime:
    repositories = repositories or repositories_from_settings(settings)
    agent = build_agent(
        repositories,
        # A missing embedding key must not stop the bot: semantic search degrades to structured search.
        provider_from_settings(settings, strict=False),
        chat_llm(settings),
        max_tool_rounds=settings.agent.max_tool_rounds,
        max_retries=settings.agent.max_retries,
        turn_budget_s=settings.llm.local_turn_budget_s,
        prefetch=settings.llm.prefetch,
        price=llm_price(settings),
        shop=ShopVoice(settings.shop.name, settings.shop.contacts),  # what the answer's checks let the shop say
    )
    return Runtime(
        settings=settings,
        repositories=repositories,
        agent=agent,
        dialog=Dialog(
            agent,
            repositories,
            health_warning=settings.shop.health_warning,
            transcriber=transcriber_from_settings(settings),
            # Past a spending limit the offline responder answers; the owner hears of it in the admin chat.
            limits=limits_from_settings(settings, notify_owner=lambda text: notify_admin(settings, text)),
        ),
        photos=photo_store_from_settings(settings),
        age_gate=AgeGate(repositories.shop),
    )


def llm_price(settings: Settings) -> LLMPrice | None:
    """LLM_PRICE_PER_MTOK for the cost of a turn; an unreadable one costs the metric, not the bot."""
    try:
        return parse_price(settings.llm.price_per_mtok)
    except ValueError as exc:
        logger.warning("%s; turns are not priced", exc)
        return None


def chat_llm(settings: Settings) -> ChatLLM | None:
    """The configured chat model, or None offline (no key): the openai SDK loads only when there is one."""
    if settings.offline:
        return None
    from sommelier.agent.llm.client import llm_from_settings

    return llm_from_settings(settings)


def build_agent(
    repositories: Repositories, embedder: EmbeddingProvider, llm: ChatLLM | None, **options: Any
) -> SommelierAgent:
    """The agent on these ports, its offline responder built when a turn first needs it."""
    return SommelierAgent(
        repositories=repositories,
        embedder=embedder,
        llm=llm,
        fallback=lambda: offline_responder(repositories, embedder),
        **options,
    )


def offline_responder(repositories: Repositories, embedder: EmbeddingProvider) -> Fallback:
    """The rule-based responder (about 100 ms of import, paid by the first turn that needs it)."""
    from sommelier.offline import OfflineResponder

    return OfflineResponder(repositories.catalog, embedder)


def build_router(runtime: Runtime) -> Router:
    """The route table: the conversation's routes, then the shop's (the age gate guards them all)."""
    return shop_routes.register(customer_router(), runtime.age_gate)


def build_bot(
    settings: Settings, *, runtime: Runtime | None = None, ledger: MessageLedger | None = None, **options: object
) -> TelegramBot:
    """The Telegram consumer of this process, from the settings (``options``: TelegramBot's keywords)."""
    from sommelier.telegram.consumer import bot_from_settings

    runtime = runtime or build_runtime(settings)
    return bot_from_settings(
        settings,
        dialog=runtime.dialog,
        repositories=runtime.repositories,
        photos=runtime.photos,
        router=build_router(runtime),
        ledger=ledger,
        **options,
    )
