"""The conversation store in memory (`ChatRepository`): toolfn/chat_sql.py on a `MemoryStore`, with the
same checks of its arguments and the same port errors."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sommelier.domain.conversation import (
    ChatMessage,
    ChatState,
    FeedbackResult,
    SavedTurn,
    StoredUser,
    TurnEnd,
    TurnOpening,
    TurnRecord,
    TurnStart,
    TurnStats,
    UserInfo,
    UserUpsert,
)
from sommelier.domain.errors import ArgumentError, InvalidArgument, PortError
from sommelier.domain.search import SearchResult, ToolRequest, optional_limit, optional_text, single_uuid, uuid_list
from sommelier.domain.taste import TasteNote, TasteProfile, from_json, learn, note_from_json, to_json
from sommelier.domain.wire import to_wire
from sommelier.repositories.ports import InvocationCounter

from sommelier_dev.memory.catalog import llm_tool, wines_by_id
from sommelier_dev.memory.store import FeedbackRow, MemoryStore, MessageRow, TurnStatsRow, UserChatRow, UserRow

logger = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 2000  # toolfn/chat_sql.py
MAX_SEARCHES = 8  # toolfn/chat_sql.py
MAX_HISTORY = 50
_TELEGRAM_ID_LIMIT = 2**53
_COUNT_LIMIT = 2**31
RESPONSE_TYPES = (None, "recommendation", "informational", "off_topic")


def telegram_id(value: object, name: str) -> int:
    """A Telegram id as chat_sql reads one: an integer that fits in 53 bits."""
    if value is None:
        raise ArgumentError(f"{name} is required")
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= _TELEGRAM_ID_LIMIT:
        raise ArgumentError(f"{name} must be a Telegram id (an integer)")
    return value


def optional_telegram_id(value: object, name: str) -> int | None:
    return None if value is None else telegram_id(value, name)


def text(value: str | None, name: str, max_length: int) -> str | None:
    """optional_text of domain/search.py: whitespace folded, empty as absent, too long refused."""
    return optional_text({name: value}, name, max_length)


class MemoryChat:
    """The conversation store of a `MemoryStore`; each call counts as one invocation, as in process."""

    def __init__(self, store: MemoryStore, counter: InvocationCounter):
        self.store = store
        self.counter = counter

    def begin_turn(self, chat_id: int, *, user: UserInfo | None, history_limit: int) -> TurnStart:
        self.counter.count += 1
        with self.store.transaction() as store:
            upsert = _upsert_user(store, user) if user is not None else None
            history = _history(store, chat_id, history_limit)
            shop = store.shop_facts
            taste = _taste(store, upsert.user.telegram_user_id) if upsert is not None else None
        if upsert is None:
            return TurnStart(user=None, history=history, shop=shop)
        return TurnStart(user=upsert.user, history=history, created=upsert.created, shop=shop, taste=taste)

    def open_turn(
        self, chat_id: int, *, user: UserInfo | None, history_limit: int, searches: Sequence[ToolRequest]
    ) -> TurnOpening:
        """begin_turn and the prefetch's searches: one invocation, as the tool function's open_turn."""
        start = self.begin_turn(chat_id, user=user, history_limit=history_limit)  # counts the one invocation
        if len(searches) > MAX_SEARCHES:
            raise ArgumentError(f"calls must be a list of at most {MAX_SEARCHES} search calls")
        results: list[SearchResult | PortError] = []
        for call in searches:
            try:
                results.append(llm_tool(self.store, call))
            except PortError as exc:
                results.append(exc)
        return TurnOpening.of(start, results)

    def end_turn(self, record: TurnRecord | None, *, wine_ids: Sequence[str]) -> TurnEnd:
        self.counter.count += 1
        with self.store.transaction() as store:
            saved = _save_turn(store, record) if record is not None else None
            wines = wines_by_id(store, list(wine_ids))
        return TurnEnd(saved=saved, wines=wines.wines, missing=wines.missing, photos_cached=0)

    def history(self, chat_id: int, limit: int = 10) -> list[ChatMessage]:
        self.counter.count += 1
        with self.store.transaction() as store:
            return _history(store, chat_id, limit)

    def upsert_user(self, user: UserInfo) -> UserUpsert:
        self.counter.count += 1
        with self.store.transaction() as store:
            return _upsert_user(store, user)

    def reset_history(self, chat_id: int) -> int:
        self.counter.count += 1
        checked = telegram_id(chat_id, "chat_id")
        with self.store.transaction() as store:
            archived = 0
            for message in store.messages.values():
                if message.chat_id == checked and not message.archived:
                    message.archived = True
                    archived += 1
        return archived

    def move_chat(self, from_chat_id: int, to_chat_id: int) -> int:
        self.counter.count += 1
        old, new = telegram_id(from_chat_id, "from_chat_id"), telegram_id(to_chat_id, "to_chat_id")
        if old == new:
            raise ArgumentError("from_chat_id and to_chat_id must differ")
        with self.store.transaction() as store:
            moved = 0
            for message in store.messages.values():
                if message.chat_id == old:
                    message.chat_id = new
                    moved += 1
            for vote in store.feedback.values():
                if vote.chat_id == old:
                    vote.chat_id = new
            now = store.clock.now()
            for (user_id, chat_id), member in list(store.user_chats.items()):
                if chat_id == old:
                    store.user_chats.setdefault((user_id, new), UserChatRow(user_id, new, member.is_active, now))
                    del store.user_chats[(user_id, old)]
            for user in store.users.values():
                if user.chat_id == old:
                    user.chat_id = new
        return moved

    def set_active(self, chat_id: int, active: bool, *, user_id: int | None = None) -> int:
        self.counter.count += 1
        checked_user = optional_telegram_id(user_id, "telegram_user_id")
        checked_chat = telegram_id(chat_id, "chat_id")
        if not isinstance(active, bool):
            raise ArgumentError("active must be true or false")
        with self.store.transaction() as store:
            now = store.clock.now()
            users: list[int] = []
            for member in store.user_chats.values():
                if member.chat_id == checked_chat and checked_user in (None, member.telegram_user_id):
                    member.is_active, member.changed_at = active, now
                    users.append(member.telegram_user_id)
            for user_key in set(users):
                if user_key in store.users:
                    store.users[user_key].is_active = any(
                        m.is_active for m in store.user_chats.values() if m.telegram_user_id == user_key
                    )
        return len(users)

    def chat_state(self, user_id: int) -> list[ChatState]:
        self.counter.count += 1
        checked = telegram_id(user_id, "telegram_user_id")
        with self.store.transaction() as store:
            members = [m for m in store.user_chats.values() if m.telegram_user_id == checked]
        return [ChatState(chat_id=m.chat_id, is_active=m.is_active) for m in sorted(members, key=lambda m: m.chat_id)]

    def save_feedback(
        self, *, chat_id: int, user_id: int, rating: int, message_id: int | None, wine_id: str | None = None
    ) -> FeedbackResult:
        self.counter.count += 1
        chat, user = telegram_id(chat_id, "chat_id"), telegram_id(user_id, "user_id")
        if message_id is not None and (
            isinstance(message_id, bool) or not isinstance(message_id, int) or message_id < 1
        ):
            raise ArgumentError("message_id must be a positive integer")
        if rating not in (-1, 1) or isinstance(rating, bool):
            raise ArgumentError("rating must be 1 (👍) or -1 (👎)")
        wine = single_uuid({"wine_id": wine_id}, "wine_id", required=False)
        with self.store.transaction() as store:
            return _vote(store, chat, user, rating, message_id, wine)

    def taste_profile(self, user_id: int) -> TasteProfile:
        self.counter.count += 1
        checked = telegram_id(user_id, "telegram_user_id")
        with self.store.transaction() as store:
            return _taste(store, checked) or TasteProfile()

    def remember_photo(self, wine_id: str, file_id: str) -> None:
        # As in process: stored at once and not counted; a bad id is only a missed shortcut.
        try:
            cache_photo(self.store, wine_id, file_id)
        except PortError as exc:
            logger.warning("photo id not cached: %s", exc)


def cache_photo(store: MemoryStore, wine_id: str, file_id: str) -> int:
    checked = single_uuid({"wine_id": wine_id}, "wine_id")
    file = text(file_id, "file_id", 256)
    if not file:
        raise ArgumentError("file_id is required")
    with store.transaction():
        wine = store.wines.get(str(checked))
        if wine is None:
            return 0
        wine.telegram_file_id = file  # not a column any word is computed from
        return 1


def _history(store: MemoryStore, chat_id: int, limit: int | None) -> list[ChatMessage]:
    checked = telegram_id(chat_id, "chat_id")
    bounded = optional_limit({"limit": limit}, default=10, maximum=MAX_HISTORY)
    messages = sorted(
        (m for m in store.messages.values() if m.chat_id == checked and not m.archived), key=lambda m: m.id
    )
    return [
        ChatMessage(
            id=m.id,
            role="user" if m.role == "user" else "assistant",
            content=m.content,
            wine_ids=list(m.wine_ids),
            response_type=m.response_type,
            created_at=m.created_at.isoformat(),
        )
        for m in messages[-bounded:]
    ]


def _upsert_user(store: MemoryStore, user: UserInfo) -> UserUpsert:
    user_id = telegram_id(user.telegram_user_id, "telegram_user_id")
    chat_id = telegram_id(user.chat_id, "chat_id")
    username, first_name, last_name = (
        text(value, name, 256)
        for value, name in ((user.username, "username"), (user.first_name, "first_name"), (user.last_name, "last_name"))
    )
    language = text(user.language_code, "language_code", 16)
    now = store.clock.now()
    row = store.users.get(user_id)
    created = row is None
    if row is None:
        row = store.users[user_id] = UserRow(
            user_id, chat_id, username, first_name, last_name, language, {}, True, now, now
        )
    else:
        row.chat_id, row.username, row.first_name, row.last_name = chat_id, username, first_name, last_name
        row.language_code, row.last_seen_at, row.is_active = language, now, True
    # A message from this chat proves the bot can write there again (and only there).
    member = store.user_chats.get((user_id, chat_id))
    if member is None:
        store.user_chats[(user_id, chat_id)] = UserChatRow(user_id, chat_id, True, now)
    elif not member.is_active:
        member.is_active, member.changed_at = True, now
    stored = StoredUser(
        telegram_user_id=row.telegram_user_id,
        chat_id=row.chat_id,
        username=row.username,
        first_name=row.first_name,
        profile=dict(row.profile),
        is_active=row.is_active,
    )
    return UserUpsert(user=stored, created=created)


def _save_turn(store: MemoryStore, record: TurnRecord) -> SavedTurn:
    """save_turn: the user's text and the rendered answer, once per update (a redelivery saves nothing new)."""
    chat_id = telegram_id(record.chat_id, "chat_id")
    user_id = optional_telegram_id(record.user_id, "user_id")
    update_id = optional_telegram_id(record.update_id, "update_id")
    if not text(record.user_text, "user_text", MAX_MESSAGE_CHARS) or not text(
        record.answer_text, "answer_text", MAX_MESSAGE_CHARS
    ):
        raise ArgumentError("user_text and answer_text are required (at most 2000 characters each)")
    user_text, answer_text = record.user_text.strip(), record.answer_text.strip()  # paragraphs kept
    wine_ids = uuid_list({"wine_ids": list(record.wine_ids)}, "wine_ids")
    if record.response_type not in RESPONSE_TYPES:
        raise ArgumentError("response_type must be recommendation, informational or off_topic")
    stats = _turn_stats(record.stats)
    if max(len(user_text), len(answer_text)) > MAX_MESSAGE_CHARS:
        raise InvalidArgument("end_turn: a value is out of the allowed range (ck_messages_content_length)")
    now = store.clock.now()
    ids: list[int] = []
    first_delivery = True
    for role, content, wines, response_type in (
        ("user", user_text, [], None),
        ("assistant", answer_text, wine_ids, record.response_type),
    ):
        earlier = _delivered(store, chat_id, update_id, role)
        if earlier is not None:
            first_delivery = False
            ids.append(earlier.id)
            continue
        message = MessageRow(
            store.message_ids.next(), chat_id, user_id, role, content, wines, response_type, update_id, now
        )
        store.messages[message.id] = message
        ids.append(message.id)
    if stats is not None and first_delivery:
        key = store.turn_stats_ids.next()
        store.turn_stats[key] = TurnStatsRow(
            key, stats.mode, stats.llm_calls, stats.prompt_tokens, stats.completion_tokens, len(wine_ids), now
        )
    if user_id is not None and first_delivery and record.taste is not None:
        _learn(store, user_id, note_from_json(to_wire(record.taste)))  # checked as the wire would be
    return SavedTurn(saved=True, user_message_id=ids[0], assistant_message_id=ids[1])


def _delivered(store: MemoryStore, chat_id: int, update_id: int | None, role: str) -> MessageRow | None:
    if update_id is None:
        return None
    for message in store.messages.values():
        if (message.chat_id, message.update_id, message.role) == (chat_id, update_id, role):
            return message
    return None


def _turn_stats(stats: TurnStats | None) -> TurnStats | None:
    if stats is None:
        return None
    mode = text(stats.mode, "mode", 40)
    if not mode:
        raise ArgumentError("stats.mode is required")
    for name in ("llm_calls", "prompt_tokens", "completion_tokens"):
        number = getattr(stats, name)
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < _COUNT_LIMIT:
            raise ArgumentError(f"stats.{name} must be a non-negative integer")
    return stats._replace(mode=mode)


def _vote(
    store: MemoryStore, chat_id: int, user_id: int, rating: int, message_id: int | None, wine_id: str | None
) -> FeedbackResult:
    """One vote per (user, answer): a second press replaces it, and the row keeps what it replaced."""
    message = store.messages.get(message_id) if message_id is not None else None
    if message is None or message.chat_id != chat_id:
        message_id = None  # a stale button: keep the vote, drop the link
    if wine_id is not None and wine_id not in store.wines:
        wine_id = None  # a wine since removed from the catalogue: keep the vote
    now = store.clock.now()
    if message_id is not None:
        earlier = next(
            (v for v in store.feedback.values() if v.user_id == user_id and v.message_id == message_id), None
        )
        if earlier is None:
            key = store.feedback_ids.next()
            store.feedback[key] = FeedbackRow(key, chat_id, user_id, message_id, wine_id, rating, now)
            _learn_vote(store, user_id, rating, message, times=1)
            return FeedbackResult(saved=True, rating=rating, previous_rating=None, changed=False)
        if earlier.rating != rating:
            earlier.changed_at = now
        earlier.previous_rating, earlier.rating, earlier.presses = earlier.rating, rating, earlier.presses + 1
        previous = earlier.previous_rating
        if previous != rating:  # a changed vote: learnt twice, the first undoes the old one
            _learn_vote(store, user_id, rating, message, times=2)
        return FeedbackResult(
            saved=True, rating=rating, previous_rating=previous, changed=previous not in (None, rating)
        )
    key = store.feedback_ids.next()
    store.feedback[key] = FeedbackRow(key, chat_id, user_id, None, wine_id, rating, now)
    return FeedbackResult(saved=True, rating=rating, previous_rating=None, changed=False)


def _taste(store: MemoryStore, user_id: int) -> TasteProfile | None:
    kept = store.taste_profiles.get(user_id)
    return None if kept is None else from_json(kept)


def _learn(store: MemoryStore, user_id: int, note: TasteNote) -> None:
    """toolfn/taste_sql.learn: the note folded into the user's profile (the same domain function)."""
    if note.empty:
        return
    wines = wines_by_id(store, list(dict.fromkeys([*note.liked, *note.disliked])))
    learned = learn(_taste(store, user_id), note, {w.id: w for w in wines.wines})
    if not learned.empty:
        store.taste_profiles[user_id] = to_json(learned)


def _learn_vote(store: MemoryStore, user_id: int, rating: int, message: MessageRow | None, *, times: int) -> None:
    shown = list(message.wine_ids) if message is not None else []
    note = TasteNote(liked=shown) if rating > 0 else TasteNote(disliked=shown)
    for _ in range(times):
        _learn(store, user_id, note)
