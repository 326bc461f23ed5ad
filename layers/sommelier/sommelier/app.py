"""The composition root: real adapters chosen from the environment (docs/architecture.md)."""

from __future__ import annotations

from dataclasses import dataclass

from sommelier.agent.llm.client import llm_from_settings
from sommelier.agent.loop import SommelierAgent
from sommelier.embeddings import provider_from_settings
from sommelier.settings import Settings, env_int, load_settings
from sommelier.shop.age_gate import AgeGate
from sommelier.storage.photos import PhotoStore, photo_store_from_settings
from sommelier.store.adapters import Repositories, repositories_from_settings
from sommelier.telegram.dialog import Dialog


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


def build_runtime(settings: Settings | None = None, *, repositories: Repositories | None = None) -> Runtime:
    settings = settings or load_settings()
    repositories = repositories or repositories_from_settings(settings)
    agent = SommelierAgent(
        repositories=repositories,
        # A missing embedding key must not stop the bot: semantic search degrades to structured search.
        embedder=provider_from_settings(settings, strict=False),
        llm=llm_from_settings(settings),
        max_tool_rounds=env_int("AGENT_MAX_TOOL_ROUNDS", 2),
        max_retries=env_int("AGENT_MAX_RETRIES", 2),
    )
    return Runtime(
        settings=settings,
        repositories=repositories,
        agent=agent,
        dialog=Dialog(agent, repositories),
        photos=photo_store_from_settings(settings),
        age_gate=AgeGate(repositories.shop),
    )
