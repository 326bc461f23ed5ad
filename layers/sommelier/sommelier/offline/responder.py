"""The offline responder: rules instead of an LLM, the same tools, a valid answer.

One turn:

1. `guards.precheck` — an obvious attack gets the guard answer, no tool calls.
2. The history's user messages are replayed through `read_query`, so a follow-up
   ("а подешевле?", "а белое?", "ещё") builds on the whole chain of the request. Shown
   prices (for "подешевле"/"подороже") are fetched with `get_wines` only when needed.
3. Greetings, thanks, help, informational and off-topic messages are answered without tools.
4. A recommendation runs `search_wines` with the structured filters and/or
   `semantic_search` with the mood words and the same filters (same tool contract as the LLM
   agent). The SQL decides which wines meet the filters; nothing here re-checks them. With
   both, wines found by both come first, ranked by similarity.
5. Nothing found → one relaxation of the softest constraint (food → region → grape →
   country), said in the intro. Type, sweetness and price are never relaxed, and a grape
   or country the customer named in this very message is not relaxed either (only one
   inherited from an earlier turn of the chain). Still nothing → an honest "nothing fits"
   answer naming a constraint to relax.
6. Tool errors → an apology, never an exception.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from sommelier import language
from sommelier.agent import guards
from sommelier.domain.answer import SommelierResponse
from sommelier.domain.conversation import ChatMessage
from sommelier.domain.errors import PortError
from sommelier.domain.search import SearchResult, ToolRequest, search_filters, semantic_request
from sommelier.domain.taste import TasteProfile
from sommelier.domain.wine import Wine
from sommelier.embeddings.port import EmbeddingProvider, embed_one
from sommelier.offline import table, writer
from sommelier.offline.follow_ups import offered
from sommelier.offline.history import Exchange, exchanges, excluded, valid_ids
from sommelier.offline.intent import QueryIntent, describe_filters, relaxable
from sommelier.offline.menu_answers import menu
from sommelier.offline.named_answers import by_name, catalogue_named, name_searches, named
from sommelier.offline.places import REGION_COUNTRY
from sommelier.offline.probe import probe
from sommelier.offline.reader import read_query
from sommelier.offline.selection import rank, select
from sommelier.offline.similar_answers import like
from sommelier.offline.table_answers import on_table
from sommelier.offline.taste_answers import said, with_taste
from sommelier.repositories.ports import CatalogRepository

logger = logging.getLogger(__name__)

CANDIDATE_LIMIT = 10
_AFFIRMATIVE = language.cues("dialogue.json", "affirmative")  # «да», «покажи»: a bare yes to an offer
RELAX_ORDER = ("food_pairing", "region", "grape_variety", "country")


@dataclass
class OfflineAnswer:
    """One answered turn.

    `found_wines` holds the search results (search_wines, semantic_search), not the wines that
    get_wines returned to look up the prices of earlier picks. `intent` is the request as
    answered: after a relaxation its filters no longer contain the relaxed one.
    """

    response: SommelierResponse
    found_wines: list[Wine]  # every wine the search tools returned this turn, each with found_by
    tool_calls: list[dict[str, Any]]  # [{"name": ..., "arguments": {... without the embedding vector}}]
    intent: QueryIntent
    relaxed: str | None = None  # the filter dropped to find wines, if any
    guard: guards.GuardVerdict | None = None
    error: str | None = None  # the tool error that produced an apology


class _ToolFailure(Exception):
    pass


@dataclass
class _Turn:
    calls: list[dict[str, Any]] = field(default_factory=list)
    found: dict[str, Wine] = field(default_factory=dict)
    prices: dict[str, float] = field(default_factory=dict)
    vectors: dict[str, list[float]] = field(default_factory=dict)  # the mood embedded once per turn
    taste: TasteProfile | None = None  # the customer's remembered taste: ranks the wines that fit


# --------------------------------------------------------------------------- the responder


class OfflineResponder:
    def __init__(self, catalog: CatalogRepository, embedder: EmbeddingProvider):
        self.catalog = catalog
        self.embedder = embedder

    # ----------------------------------------------------------------- entry point

    def respond(
        self,
        text: str,
        history: list[ChatMessage] | None = None,
        exclude_ids: list[str] | None = None,
        *,
        taste: TasteProfile | None = None,
    ) -> OfflineAnswer:
        turn = _Turn(taste=taste)
        text = text or ""
        try:
            return self._respond(turn, text, history or [], valid_ids(exclude_ids or []))
        except _ToolFailure as exc:
            return self._apology(turn, text, str(exc))
        except Exception as exc:  # the contract: an answer, never an exception
            logger.exception("offline responder failed")
            return self._apology(turn, text, f"{type(exc).__name__}")

    def candidate_searches(
        self,
        text: str,
        history: list[ChatMessage] | None = None,
        exclude_ids: list[str] | None = None,
        *,
        embedded: bool = True,
    ) -> list[ToolRequest]:
        """The searches this responder would start a wine request with, not run: the agent's prefetch sends them
        together (one tool-function invocation). None for anything but a recommendation (a greeting, a
        question); a wine asked for by name, or words that may be a name of the shop's, are searched by name
        first. ``embedded`` False: the semantic search without its vector (the reading alone, which the agent
        compares and embeds itself)."""
        text = text or ""
        if guards.precheck(text) is not None or self.table_ids(text, history):
            return []  # an attack, or a question about the wines on the table (they go before the model)
        previous, _, chain = self._replay(_Turn(), exchanges(history or []), resolve=False)
        intent = read_query(text, previous)
        names = name_searches(text, intent)  # «есть Cloudy Bay?», «trapiche sauvignon blanc»: the name first
        if intent.kind != "recommendation" or intent.wine_name:
            return names
        exclude = excluded(valid_ids(exclude_ids or []), chain, intent)
        filters = describe_filters(intent.filters)
        requests: list[ToolRequest] = []
        if intent.mood and not embedded:
            semantic_words: dict[str, Any] = {"query": intent.mood, "limit": CANDIDATE_LIMIT, **filters}
            requests.append(
                ToolRequest("semantic_search", semantic_words | ({"exclude_ids": exclude} if exclude else {}))
            )
        elif intent.mood:
            try:
                vector = embed_one(self.embedder, intent.mood)
            except Exception as exc:  # no embeddings: the structured search still runs
                logger.warning("prefetch could not embed the query: %s", exc)
            else:
                semantic: dict[str, Any] = {
                    "query": intent.mood,
                    "embedding": vector,
                    "embedding_model": self.embedder.model,
                    "limit": CANDIDATE_LIMIT,
                    **filters,
                }
                requests.append(
                    ToolRequest("semantic_search", semantic | ({"exclude_ids": exclude} if exclude else {}))
                )
        if filters or not requests:
            structured: dict[str, Any] = {**filters, "limit": CANDIDATE_LIMIT}
            requests.append(ToolRequest("search_wines", structured | ({"exclude_ids": exclude} if exclude else {})))
        return [*names, *requests]

    def table_ids(self, text: str, history: list[ChatMessage] | None = None) -> list[str]:
        """The last shown wines, in order, when the message asks about them (offline/table.py); else []."""
        pairs = exchanges(history or [])
        shown = next((p.wine_ids for p in reversed(pairs) if p.wine_ids), [])
        return list(shown) if table.asks_about_table(text or "", len(shown)) else []

    def _apology(self, turn: _Turn, text: str, error: str) -> OfflineAnswer:
        return OfflineAnswer(
            response=writer.tool_error(text),
            found_wines=list(turn.found.values()),
            tool_calls=turn.calls,
            intent=QueryIntent(kind="recommendation"),
            error=error,
        )

    def _respond(self, turn: _Turn, text: str, history: list[ChatMessage], exclude_ids: list[str]) -> OfflineAnswer:
        verdict = guards.precheck(text)
        if verdict is not None:
            return OfflineAnswer(
                response=guards.guard_response(verdict, seed=text),
                found_wines=[],
                tool_calls=[],
                intent=QueryIntent(kind="off_topic"),
                guard=verdict,
            )
        pairs = exchanges(history)
        about_table = self._about_table(turn, text, pairs)
        if about_table is not None:
            return about_table
        step = table.sweetness_step(text)
        if step and pairs:
            stepped = self._sweetness_stepped(turn, text, pairs, step, exclude_ids)
            if stepped is not None:
                return stepped
        if _AFFIRMATIVE.covers(text):
            answered = self._answer_a_yes(turn, text, pairs, exclude_ids)
            if answered is not None:
                return answered
        intent, chain = self._read_request(turn, text, pairs)
        intent = catalogue_named(text, intent, self._look_up) or intent
        without_wines = writer.answer_without_wines(intent.kind, intent.topic, text)
        if without_wines is not None:
            return OfflineAnswer(without_wines, [], [], intent)
        alike = self._similar(turn, text, exclude_ids)
        if alike is not None:
            return alike
        if intent.wine_name:
            return self._named(turn, text, intent, excluded(exclude_ids, chain, intent))
        courses = (
            None
            if intent.follow_up
            else menu(text, intent, exclude_ids, lambda a: self._search(turn, "search_wines", a))
        )
        if courses is not None:  # «салат с креветками, утка и сырная тарелка»: a wine per course (offline/menu.py)
            return OfflineAnswer(courses, list(turn.found.values()), turn.calls, intent)
        return writer.for_party(self._recommend(turn, text, intent, excluded(exclude_ids, chain, intent)), intent)

    def _answer_a_yes(
        self, turn: _Turn, text: str, pairs: list[Exchange], exclude_ids: list[str]
    ) -> OfflineAnswer | None:
        """«да», «покажи» to the bot's previous answer: what its closing offer or glossary question offered, or
        a question back when it offered nothing concrete; None when the yes answers no question."""
        previous, shown, chain = self._replay(turn, pairs, resolve=True)
        last_answer = pairs[-1].answer if pairs else ""
        accepted = self._accepted_offer(turn, text, last_answer, previous, shown)
        if accepted is not None:
            intent, offer = accepted
            exclude = excluded(exclude_ids, chain, intent)
            if intent.wine_name:
                return self._named(turn, text, intent, exclude)
            return self._recommend(turn, text, intent, exclude, ask=offer.ask)
        asked = writer.yes_to_info_offer(text, last_answer)
        if asked is not None:
            return self._recommend(turn, text, asked, list(exclude_ids))
        if last_answer.rstrip().endswith("?"):
            # a yes to a question that offered nothing concrete («…изменим условия?»): ask what to change
            return OfflineAnswer(writer.clarify(text), [], [], QueryIntent(kind="informational"))
        return None

    def _read_request(self, turn: _Turn, text: str, pairs: list[Exchange]) -> tuple[QueryIntent, list[str]]:
        """The message read after the history's requests, and the wines shown in its chain: a follow-up that
        moves the price («подешевле») is read again with the prices shown before it."""
        previous, _, _ = self._replay(turn, pairs, resolve=False)
        intent = read_query(text, previous)
        chain: list[str] = []
        if intent.kind == "recommendation" and intent.follow_up:
            previous, shown, chain = self._replay(turn, pairs, resolve=True)
            intent = read_query(text, previous)
            if intent.price_direction and shown and previous is not None:
                previous = replace(previous, shown_prices=self._prices(turn, shown))
                intent = read_query(text, previous)
        return intent, chain

    def _about_table(self, turn: _Turn, text: str, pairs: list[Exchange]) -> OfflineAnswer | None:
        """A question about the wines the last answer showed, from their rows, no search (offline/table.py)."""
        at = next((i for i in range(len(pairs) - 1, -1, -1) if pairs[i].wine_ids), None)
        if at is None or not table.may_ask_about_table(text):
            return None
        since = [p.user for p in pairs[at + 1 :]]
        response = on_table(text, pairs[at].wine_ids, since, lambda ids: self._get_wines(turn, ids))
        return None if response is None else OfflineAnswer(response, [], turn.calls, QueryIntent(kind="informational"))

    def _sweetness_stepped(
        self, turn: _Turn, text: str, pairs: list[Exchange], step: int, exclude_ids: list[str]
    ) -> OfflineAnswer | None:
        previous, shown, chain = self._replay(turn, pairs, resolve=False)
        level = table.stepped_sweetness([w.sweetness for w in self._get_wines(turn, shown)] if shown else [], step)
        if previous is None or level is None:
            return None
        intent = offered(previous, filters={"sweetness": level})
        return self._recommend(turn, text, intent, excluded(exclude_ids, chain, intent))

    def _similar(self, turn: _Turn, text: str, exclude_ids: list[str]) -> OfflineAnswer | None:
        """«как Киндзмараули, но подешевле», «похожее на Кьянти» (offline/similar.py)."""
        answered = like(
            text,
            exclude_ids,
            lambda name: by_name(lambda a: self._search(turn, "search_wines", a), [name], {}),
            lambda a: self._search(turn, "search_wines", a),
        )
        if answered is None:
            return None
        response, intent = answered
        return OfflineAnswer(response, list(turn.found.values()) if response.wines else [], turn.calls, intent)

    # ----------------------------------------------------------------- history

    def _accepted_offer(
        self, turn: _Turn, text: str, answer: str, previous: QueryIntent | None, shown: list[str]
    ) -> tuple[QueryIntent, writer.Offer] | None:
        """«да», «покажи», «давай» to the offer in the closing question of the bot's previous answer: the
        previous request changed the way the offer says (writer.Offer). The offer is read back from the saved
        answer text, so it survives between turns with nothing stored beside the message."""
        if previous is None or not _AFFIRMATIVE.covers(text):
            return None
        offer = writer.pending_offer(answer)
        if offer is None:
            return None
        if offer.action == "set" and offer.key:
            return offered(previous, filters={offer.key: offer.value}), offer
        if offer.action in ("cheaper", "pricier"):
            if shown:
                previous = replace(previous, shown_prices=self._prices(turn, shown))
            return offered(previous, direction="cheaper" if offer.action == "cheaper" else "pricier"), offer
        if offer.action == "more":
            return offered(previous, more=True), offer
        filters = dict(previous.filters)
        if offer.key == "price_max" and offer.price:
            filters["price_max"] = offer.price
        elif offer.key == "price_min" and offer.price:
            filters.pop("price_min", None)
            filters["price_max"] = offer.price
        elif offer.key == "price":
            filters.pop("price_min", None)
            filters.pop("price_max", None)
        elif offer.key:
            filters.pop(offer.key, None)
        return replace(previous, filters=filters, follow_up=True, more=False, price_direction=None), offer

    def _replay(
        self, turn: _Turn, pairs: list[Exchange], *, resolve: bool
    ) -> tuple[QueryIntent | None, list[str], list[str]]:
        """The intent of the latest request in the history, the wines shown for it, and all shown in its chain.
        A yes to an offer counts as the request the offer made («да» after «…что-нибудь белое?» is «а белое?»)."""
        previous: QueryIntent | None = None
        shown: list[str] = []
        chain: list[str] = []
        answer_before = ""
        for exchange in pairs:
            before, answer_before = answer_before, exchange.answer
            if guards.precheck(exchange.user) is not None:
                continue
            if not exchange.wine_ids and table.asks_about_table(exchange.user, len(shown)):
                continue  # a question about the wines on the table changes no request
            accepted = self._accepted_offer(turn, exchange.user, before, previous, shown if resolve else [])
            intent = accepted[0] if accepted else writer.yes_to_info_offer(exchange.user, before)
            if accepted is None:
                intent = table.sweetness_replayed(exchange.user, previous) or intent
            intent = intent or read_query(exchange.user, previous)
            if intent.kind != "recommendation":
                continue
            if (
                accepted is None
                and resolve
                and intent.follow_up
                and intent.price_direction
                and shown
                and previous is not None
            ):
                intent = read_query(exchange.user, replace(previous, shown_prices=self._prices(turn, shown)))
            chain = [*chain, *exchange.wine_ids] if intent.follow_up else list(exchange.wine_ids)
            previous, shown = intent, list(exchange.wine_ids)
        return previous, shown, chain

    def _prices(self, turn: _Turn, ids: list[str]) -> list[float]:
        missing = [i for i in ids if i not in turn.prices]
        if missing:
            try:
                wines = self._get_wines(turn, missing)
            except _ToolFailure:
                return []  # the reader then lowers the previous budget instead
            for wine in wines:
                turn.prices[wine.id] = float(wine.price_rub)
        return [turn.prices[i] for i in ids if i in turn.prices]

    # ----------------------------------------------------------------- tools

    def _get_wines(self, turn: _Turn, ids: list[str]) -> list[Wine]:
        turn.calls.append({"name": "get_wines", "arguments": {"ids": ids}})
        try:
            return self.catalog.get_wines(ids).wines
        except PortError as exc:
            turn.calls[-1]["error"] = str(exc)
            raise _ToolFailure(str(exc)) from exc

    def _search(self, turn: _Turn, name: str, arguments: dict[str, Any]) -> list[Wine]:
        """One search tool call, recorded; its wines join the turn's found wines (a semantic score kept)."""
        record: dict[str, Any] = {"name": name, "arguments": {k: v for k, v in arguments.items() if k != "embedding"}}
        turn.calls.append(record)
        try:
            result = self._run_search(name, arguments)
        except PortError as exc:
            record["error"] = str(exc)
            raise _ToolFailure(str(exc)) from exc
        except Exception as exc:  # a misbehaving adapter: treat as a tool error
            record["error"] = f"{name} failed: {type(exc).__name__}"
            raise _ToolFailure(record["error"]) from exc
        wines = [w for w in result.wines_with_photos() if w.id and w.name]
        record["found"] = len(wines)
        for wine in wines:
            known = turn.found.get(wine.id)
            if known is None:
                turn.found[wine.id] = replace(wine, found_by=name)
            elif wine.similarity_score is not None and known.similarity_score is None:
                turn.found[wine.id] = replace(known, similarity_score=wine.similarity_score)
        return [turn.found[w.id] for w in wines]

    def _look_up(self, arguments: dict[str, Any]) -> list[Wine]:
        """A search that is no part of the answer unless it finds something (the answer then searches again)."""
        try:
            return self._run_search("search_wines", arguments).wines
        except Exception:  # an unreachable catalogue knows no names
            logger.warning("offline responder could not look a name up", exc_info=True)
            return []

    def _run_search(self, name: str, arguments: dict[str, Any]) -> SearchResult:
        if name == "semantic_search":
            return self.catalog.semantic_search(semantic_request(arguments))
        return self.catalog.search_wines(search_filters(arguments))

    def _structured(self, turn: _Turn, filters: dict[str, Any], exclude: list[str]) -> list[Wine]:
        arguments: dict[str, Any] = {**filters, "limit": CANDIDATE_LIMIT}
        if exclude:
            arguments["exclude_ids"] = exclude
        return self._search(turn, "search_wines", arguments)

    def _semantic(self, turn: _Turn, mood: str, filters: dict[str, Any], exclude: list[str]) -> list[Wine] | None:
        vector = turn.vectors.get(mood)
        if vector is None:
            try:
                vector = turn.vectors[mood] = embed_one(self.embedder, mood)
            except Exception as exc:  # no embeddings: structured search still works
                logger.warning("offline responder could not embed the query: %s", exc)
                return None
        arguments: dict[str, Any] = {
            "query": mood,
            "embedding": vector,
            "embedding_model": self.embedder.model,
            "limit": CANDIDATE_LIMIT,
            "hybrid": True,  # the mood's words rank wines beside its meaning
        }
        arguments.update(filters)
        if exclude:
            arguments["exclude_ids"] = exclude
        try:
            return self._search(turn, "semantic_search", arguments)
        except _ToolFailure:
            # e.g. the catalogue is embedded with another model: structured search still answers
            return None

    def _can_keep(
        self, offer: writer.Offer, intent: QueryIntent, picks: list[Wine], shown: list[str], candidates: int
    ) -> bool:
        """Would a yes to the offer find wines? The request the yes makes (the same rules as the yes itself,
        reader.offered), one wine asked for, beside the turn's recorded tool calls. A failed check offers
        nothing rather than a promise the catalogue may not keep."""
        if offer.action == "more":
            return candidates > len(picks)
        if offer.action == "set" and offer.key:
            change = offered(intent, filters={offer.key: offer.value})
        elif offer.action in ("cheaper", "pricier"):
            prices = [float(w.price_rub) for w in picks]
            change = offered(replace(intent, shown_prices=prices), direction=offer.action)  # type: ignore[arg-type]
        else:
            return True  # a question that asks (budget, dish) rather than offers
        arguments = {**describe_filters(change.filters), "limit": 1, "exclude_ids": shown}
        try:
            return bool(self._run_search("search_wines", arguments).wines)
        except Exception:  # an unreachable catalogue keeps no promise
            logger.warning("offline responder could not check a closing offer", exc_info=True)
            return False

    # ----------------------------------------------------------------- a wine asked for by name

    def _named(self, turn: _Turn, text: str, intent: QueryIntent, exclude: list[str]) -> OfflineAnswer:
        """«Есть у вас Petrus 2010?», «trapiche sauvignon blanc»: answered honestly (offline/named_answers.py)."""
        response, answered = named(
            text,
            intent,
            exclude,
            lambda a: self._search(turn, "search_wines", a),
            lambda filters, leave_out: self._structured(turn, filters, leave_out),
        )
        return OfflineAnswer(response, list(turn.found.values()), turn.calls, answered)

    # ----------------------------------------------------------------- recommendation

    def _recommend(
        self, turn: _Turn, text: str, intent: QueryIntent, exclude: list[str], ask: str | None = None
    ) -> OfflineAnswer:
        filters = describe_filters(intent.filters)
        candidates = self._candidates(turn, intent.mood, filters, exclude)
        relaxed: tuple[str, Any] | None = None
        if not candidates and filters:
            candidates, filters, relaxed = self._relaxed(turn, intent, filters, exclude)

        wording_intent = replace(intent, filters=filters)
        found = list(turn.found.values())
        if not candidates:
            search = lambda a: self._search(turn, "search_wines", a)  # noqa: E731
            blocker, nearest = (None, None) if intent.more else probe(search, filters, exclude)
            response = writer.nothing_found(intent, query=text, blocker=blocker, nearest_price=nearest)
            return OfflineAnswer(response, list(turn.found.values()), turn.calls, intent)
        diversify = not filters.get("wine_type") and not intent.mood
        picks, because = with_taste(turn.taste, candidates, lambda c: select(c, diversify=diversify))
        shown = [*exclude, *(w.id for w in picks)]
        response = writer.recommendation(
            wording_intent,
            picks,
            query=text,
            relaxed=relaxed,
            ask=ask,
            can_offer=lambda offer: self._can_keep(offer, wording_intent, picks, shown, len(candidates)),
        )
        response = said(response, because)  # the remembered taste, when it chose (offline/taste_answers.py)
        return OfflineAnswer(response, found, turn.calls, wording_intent, relaxed=relaxed[0] if relaxed else None)

    def _candidates(self, turn: _Turn, mood: str | None, filters: dict[str, Any], exclude: list[str]) -> list[Wine]:
        """The wines that meet the filters: by the mood's meaning, by the filters, or both, ranked together."""
        semantic: list[Wine] = []
        structured: list[Wine] = []
        ran_structured = False
        if mood:
            hits = self._semantic(turn, mood, filters, exclude)
            if hits is not None:
                semantic = hits
        if filters or not mood or not semantic:
            structured = self._structured(turn, filters, exclude)
            ran_structured = True
        return rank(structured, semantic, ran_structured)

    def _relaxed(
        self, turn: _Turn, intent: QueryIntent, filters: dict[str, Any], exclude: list[str]
    ) -> tuple[list[Wine], dict[str, Any], tuple[str, Any] | None]:
        """One relaxation of the softest condition that may be relaxed (RELAX_ORDER): the wines it finds, the
        filters they meet and the condition dropped; else no wines, the filters as they were and None."""
        key = next((k for k in RELAX_ORDER if filters.get(k) and relaxable(k, intent)), None)
        if key is None:
            return [], filters, None
        loose = {k: v for k, v in filters.items() if k != key}
        if key == "region" and not loose.get("country") and REGION_COUNTRY.get(str(filters["region"])):
            loose["country"] = REGION_COUNTRY[str(filters["region"])]
        structured = self._structured(turn, loose, exclude)
        semantic = (self._semantic(turn, intent.mood, loose, exclude) or []) if intent.mood else []
        candidates = rank(structured, semantic, True)
        if not candidates:
            return [], filters, None
        return candidates, loose, (key, filters[key])
