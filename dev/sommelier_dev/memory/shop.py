"""The shop's records in memory (`ShopRepository`): toolfn/shop_sql.py on a `MemoryStore`."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sommelier.domain.errors import ArgumentError
from sommelier.domain.search import optional_text
from sommelier.domain.shop import (
    AdminStats,
    AskedQuery,
    ForgetResult,
    FoundWines,
    ModeFigures,
    ReportData,
    ShelfWine,
    WineCard,
    WineVotes,
)
from sommelier.domain.shop_facts import ShopFacts, ShopFactsError, facts_json, read_facts
from sommelier.domain.wine import Wine
from sommelier.repositories.ports import InvocationCounter
from sommelier.toolfn.search import full_wine

from sommelier_dev.memory.chat import telegram_id
from sommelier_dev.memory.search import cosine_distance, typical_price_distance
from sommelier_dev.memory.store import AgeAnswerRow, MemoryStore, MessageRow, WineRow

MAX_RETENTION_DAYS = 3650  # toolfn/shop_sql.py
MAX_REPORT_QUERIES = 5000
MAX_REFS = 200
SIMILAR_WINES = 2
ALTERNATIVES = 3
_REF_WORD = re.compile(r"[^0-9A-Za-zА-Яа-яЁё]+")


def _validated(facts: ShopFacts) -> ShopFacts:
    try:
        return read_facts(facts_json(facts))
    except ShopFactsError as exc:
        raise ArgumentError(str(exc)) from None


class MemoryShop:
    """The shop's records of a `MemoryStore`; each call counts as one invocation, as in process."""

    def __init__(self, store: MemoryStore, counter: InvocationCounter):
        self.store = store
        self.counter = counter

    def get_age_answer(self, user_id: int) -> bool | None:
        self.counter.count += 1
        checked = telegram_id(user_id, "telegram_user_id")
        with self.store.transaction() as store:
            answer = store.age_answers.get(checked)
            return answer.is_adult if answer else None

    def shop_facts(self) -> ShopFacts | None:
        self.counter.count += 1
        with self.store.transaction() as store:
            return store.shop_facts

    def put_shop_facts(self, facts: ShopFacts | None) -> ShopFacts | None:
        self.counter.count += 1
        # The wire's round trip, as the tool function reads it: what is kept is what validates.
        checked = None if facts is None else _validated(facts)
        with self.store.transaction() as store:
            store.shop_facts = checked
        return checked

    def save_age_answer(self, user_id: int, is_adult: bool) -> None:
        self.counter.count += 1
        checked = telegram_id(user_id, "telegram_user_id")
        if not isinstance(is_adult, bool):
            raise ArgumentError("is_adult must be true or false")
        with self.store.transaction() as store:
            store.age_answers[checked] = AgeAnswerRow(checked, is_adult, store.clock.now())

    def forget_user(self, user_id: int) -> ForgetResult:
        """Everything kept about one Telegram user (in a private chat the chat id is the user's id)."""
        self.counter.count += 1
        checked = telegram_id(user_id, "telegram_user_id")
        with self.store.transaction() as store:
            votes = [k for k, v in store.feedback.items() if checked in (v.user_id, v.chat_id)]
            for key in votes:
                del store.feedback[key]
            messages = [k for k, m in store.messages.items() if checked in (m.user_id, m.chat_id)]
            _delete_messages(store, messages)
            age = 1 if store.age_answers.pop(checked, None) else 0
            taste = 1 if store.taste_profiles.pop(checked, None) is not None else 0
            users = [k for k, u in store.users.items() if checked in (u.telegram_user_id, u.chat_id)]
            for key in users:
                del store.users[key]
            for member in [m for m in store.user_chats if m[0] in users]:  # ON DELETE CASCADE
                del store.user_chats[member]
        return ForgetResult(
            {
                "feedback": len(votes),
                "messages": len(messages),
                "age_answers": age,
                "taste_profiles": taste,
                "users": len(users),
            }
        )

    def purge_old_messages(self, days: int) -> int:
        self.counter.count += 1
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_RETENTION_DAYS:
            raise ArgumentError(f"days must be an integer from 1 to {MAX_RETENTION_DAYS}")
        with self.store.transaction() as store:
            cutoff = store.clock.now() - timedelta(days=days)
            old = [k for k, m in store.messages.items() if m.created_at < cutoff]
            _delete_messages(store, old)
        return len(old)

    def find_wines(self, refs: Sequence[str]) -> FoundWines:
        self.counter.count += 1
        checked = _refs(refs)
        found: list[ShelfWine] = []
        missing: list[str] = []
        with self.store.transaction() as store:
            for ref in checked:
                row = _by_ref(store, ref)
                if row is None:
                    missing.append(ref)
                else:
                    found.append(ShelfWine(ref=ref, wine=full_wine(row.columns())))
        return FoundWines(wines=found, missing=missing)

    def wine_card(self, ref: str) -> WineCard:
        self.counter.count += 1
        checked = optional_text({"ref": ref}, "ref", 100)
        if not checked:
            raise ArgumentError("ref (a sku or a wine id) is required")
        with self.store.transaction() as store:
            row = _by_ref(store, checked)
            if row is None:
                return WineCard(wine=None, alternatives=[_full(r) for r in _alternatives(store, checked, ALTERNATIVES)])
            if not row.available:
                similar = _similar(store, row, ALTERNATIVES)
                return WineCard(wine=None, unavailable=_full(row), alternatives=[_full(r) for r in similar])
            return WineCard(wine=_full(row), similar=[_full(r) for r in _similar(store, row, SIMILAR_WINES)])

    def report_data(self, since: str, until: str) -> ReportData:
        self.counter.count += 1
        start, end = _instant(since, "since"), _instant(until, "until")
        if not start < end or end - start > timedelta(days=366):
            raise ArgumentError("since must be before until, at most a year apart")
        with self.store.transaction() as store:
            return _report(store, start, end)

    def admin_stats(self) -> AdminStats:
        self.counter.count += 1
        with self.store.transaction() as store:
            now = store.clock.now()
            today = now.replace(hour=0, minute=0, second=0, microsecond=0)
            week = now - timedelta(days=7)
            turns = list(store.turn_stats.values())
            votes = [v for v in store.feedback.values() if v.created_at >= week]
            recent = [t for t in turns if t.created_at >= week]
            return AdminStats(
                customers=len(store.users),
                turns_today=sum(1 for t in turns if t.created_at >= today),
                turns_7d=len(recent),
                likes_7d=sum(1 for v in votes if v.rating == 1),
                dislikes_7d=sum(1 for v in votes if v.rating == -1),
                wines=len(store.wines),
                prompt_tokens_7d=sum(t.prompt_tokens for t in recent),
                completion_tokens_7d=sum(t.completion_tokens for t in recent),
            )


def _full(row: WineRow) -> Wine:
    return full_wine(row.columns())


def _delete_messages(store: MemoryStore, keys: list[int]) -> None:
    """DELETE FROM messages: a vote on a deleted answer keeps its count, unlinked (ON DELETE SET NULL)."""
    gone = set(keys)
    for key in keys:
        del store.messages[key]
    for vote in store.feedback.values():
        if vote.message_id in gone:
            vote.message_id = None


def _refs(refs: Sequence[str]) -> list[str]:
    if not isinstance(refs, Sequence) or isinstance(refs, str) or not refs or len(refs) > MAX_REFS:
        raise ArgumentError(f"refs must be a list of 1-{MAX_REFS} skus or wine ids")
    if not all(isinstance(r, str) and 0 < len(r.strip()) <= 100 for r in refs):
        raise ArgumentError("each ref must be a sku or a wine id (1-100 characters)")
    return [r.strip() for r in refs]


def _by_ref(store: MemoryStore, ref: str) -> WineRow | None:
    """A wine by its catalogue id, else by the shop's sku."""
    try:
        key: str | None = str(uuid.UUID(ref))
    except ValueError:
        key = None
    if key is not None and key in store.wines:
        return store.wines[key]
    return next((w for w in store.wines.values() if w.sku == ref), None)


def _similar(store: MemoryStore, row: WineRow, limit: int) -> list[WineRow]:
    """Available wines nearest by embedding (same model), else of the same type nearest in price."""
    others = [w for w in store.wines.values() if w.available and w.id != row.id]
    similar: list[WineRow] = []
    if row.embedding is not None:
        same_model = [w for w in others if w.embedding_model == row.embedding_model]
        similar = sorted(same_model, key=lambda w: cosine_distance(w, row.embedding or (), row.norm))[:limit]
    if len(similar) < limit:
        taken = {row.id, *(w.id for w in similar)}
        rest = [w for w in others if w.wine_type == row.wine_type and w.id not in taken]
        rest.sort(key=lambda w: (abs(w.price_rub - row.price_rub), w.id))
        similar += rest[: limit - len(similar)]
    return similar


def _alternatives(store: MemoryStore, ref: str, limit: int) -> list[WineRow]:
    """For an unknown ref: wines whose name or producer holds a word of it, else typical picks."""
    words = [w.lower() for w in _REF_WORD.split(ref) if len(w) >= 3 and not w.isdigit()][:5]
    available = sorted(
        (w for w in store.wines.values() if w.available), key=lambda w: (typical_price_distance(w.price_rub), w.id)
    )
    rows: list[WineRow] = []
    if words:
        rows = [w for w in available if any(p in w.name.lower() or p in w.producer.lower() for p in words)][:limit]
    if len(rows) < limit:
        taken = {w.id for w in rows}
        rows += [w for w in available if w.id not in taken][: limit - len(rows)]
    return rows


def _instant(value: str, name: str) -> datetime:
    message = f"{name} must be an ISO 8601 timestamp with a time zone"
    if not isinstance(value, str):
        raise ArgumentError(message)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ArgumentError(message) from exc
    if moment.tzinfo is None:
        raise ArgumentError(f"{name} must carry a time zone (e.g. 2026-01-05T00:00:00+00:00)")
    return moment


def _report(store: MemoryStore, since: datetime, until: datetime) -> ReportData:
    """The figures of [since, until): turns by mode, customers, votes per wine, and what was asked."""
    modes: dict[str, list[int]] = {}
    for turn in store.turn_stats.values():
        if since <= turn.created_at < until:
            figures = modes.setdefault(turn.mode, [0, 0, 0, 0])
            for index, value in enumerate((1, turn.llm_calls, turn.prompt_tokens, turn.completion_tokens)):
                figures[index] += value
    asked = sorted(
        (m for m in store.messages.values() if m.role == "user" and since <= m.created_at < until),
        key=lambda m: -m.id,
    )
    customers = {m.user_id if m.user_id is not None else m.chat_id for m in asked}
    return ReportData(
        since=since.isoformat(),
        until=until.isoformat(),
        modes=[ModeFigures(mode, *figures) for mode, figures in sorted(modes.items())],
        customers=len(customers),
        votes=_votes(store, since, until),
        queries=[_asked(store, message) for message in asked[:MAX_REPORT_QUERIES]],
    )


def _votes(store: MemoryStore, since: datetime, until: datetime) -> list[WineVotes]:
    """A vote rates the answer: it counts for every wine that answer showed (or the wine it names)."""
    counts: dict[str, list[int]] = {}
    for vote in store.feedback.values():
        if not since <= vote.created_at < until:
            continue
        message = store.messages.get(vote.message_id) if vote.message_id is not None else None
        rated = [vote.wine_id] if vote.wine_id is not None else list(message.wine_ids) if message else []
        for wine_id in rated:
            if wine_id in store.wines:
                counts.setdefault(wine_id, [0, 0])[0 if vote.rating == 1 else 1] += 1
    votes = [
        WineVotes(wine_id, wine.name, wine.producer, wine.vintage_year, up, down)
        for wine_id, (up, down) in counts.items()
        if (wine := store.wines[wine_id])
    ]
    return sorted(votes, key=lambda v: (-v.up, -v.down, v.name))


def _asked(store: MemoryStore, question: MessageRow) -> AskedQuery:
    """The question and the first answer after it in its chat."""
    answers = [
        m
        for m in store.messages.values()
        if m.chat_id == question.chat_id and m.role == "assistant" and m.id > question.id
    ]
    answer = min(answers, key=lambda m: m.id) if answers else None
    return AskedQuery(
        text=question.content,
        wines_shown=len(answer.wine_ids) if answer else 0,
        response_type=answer.response_type if answer else None,
    )
