"""From the model's final text to a validated, grounded SommelierResponse (docs/architecture.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from sommelier.agent.answer_checks import Checking, checked, empty_after_checks, failure_message
from sommelier.agent.catalogue_rows import card_facts
from sommelier.agent.output_guard import response_problem, strip_control_characters
from sommelier.agent.refs import ids_by_ref, refs_by_id
from sommelier.domain.answer import ParsedResponse, ParseResult, SommelierResponse, WineRecommendation, answer_as_text
from sommelier.domain.wine import Wine
from sommelier.language import normalize

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_LEGACY_BLOCK = re.compile(r"\[(INTRO|WINE:\d+|CLOSING)\]", re.IGNORECASE)


def extract_json(text: str) -> Any:
    """The first JSON object in the text: bare, in a code fence, or with prose around it."""
    stripped = text.strip()
    candidates = [stripped]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("в ответе нет корректного JSON-объекта")


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "ответ"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def wine_key(name: str) -> str:
    """Names compare without case, ё, punctuation or a trailing vintage."""
    key = re.sub(r"[^\w ]+", " ", normalize(name))
    key = re.sub(r"\b(19|20)\d{2}\b", " ", key)
    return " ".join(key.split())


def ground(response: SommelierResponse, found_wines: Mapping[str, Wine]) -> SommelierResponse:
    """Every recommended wine must be one the tools returned this turn; fill in wine_id. Raises ValueError."""
    by_name: dict[str, list[str]] = {}
    for found_id, wine in found_wines.items():
        by_name.setdefault(wine_key(wine.name), []).append(found_id)
        by_name.setdefault(wine_key(f"{wine.producer} {wine.name}"), []).append(found_id)
        by_name.setdefault(wine_key(f"{wine.name} {wine.producer}"), []).append(found_id)
    by_ref = ids_by_ref(found_wines)
    grounded: list[WineRecommendation] = []
    for rec in response.wines:
        wine_id: str | None = rec.wine_id if rec.wine_id in found_wines else None
        if wine_id is None and rec.ref:
            wine_id = by_ref.get(rec.ref)
            if wine_id is None:
                raise ValueError(f"ссылки {rec.ref} нет среди кандидатов этого хода; выбирай вина только из них")
        if wine_id is None:
            matches = by_name.get(wine_key(rec.wine_name), [])
            if len(set(matches)) == 1:
                wine_id = matches[0]
        if wine_id is None:
            raise ValueError(
                f"вино «{rec.wine_name[:80]}» не найдено в результатах инструментов этого хода; "
                "рекомендуй только вина из кандидатов и результатов, называя их ref (w1, w2 …)"
            )
        ref = rec.ref or refs_by_id(found_wines).get(wine_id)
        grounded.append(rec.model_copy(update={"wine_id": wine_id, "wine_name": found_wines[wine_id].name, "ref": ref}))
    ids = [r.wine_id for r in grounded]
    if len(set(ids)) != len(ids):
        raise ValueError("одно и то же вино рекомендовано дважды")
    return response.model_copy(update={"wines": grounded})


def parse_final_response(
    content: str | None, found_wines: Mapping[str, Wine], checking: Checking | None = None
) -> ParseResult:
    """Validate and ground the model's final answer, check its every sentence (agent.answer_checks: a failing
    sentence is removed) and put each card's catalogue text in. Errors are Russian sentences fed back to the
    model."""
    if content is None or not content.strip():
        return ParseResult(error="ответ пустой; нужен JSON-объект")
    try:
        data = extract_json(content)
    except ValueError as exc:
        if not _LEGACY_BLOCK.search(content):
            return ParseResult(error=str(exc))
        data = _legacy_as_response(parse_legacy(content))
    if not isinstance(data, dict):
        return ParseResult(error="ответ должен быть JSON-объектом")
    data = strip_control_characters(data)  # NUL and other control characters never reach Telegram or the history
    data = plain_answer(data)  # Markdown marks would show literally in Telegram
    try:
        response = SommelierResponse.model_validate(data)
    except ValidationError as exc:
        return ParseResult(error=_validation_message(exc))
    try:
        response = ground(response, found_wines)
    except ValueError as exc:
        return ParseResult(error=str(exc))
    problem = response_problem(response) or language_problem(response, found_wines)
    if problem:
        return ParseResult(error=problem)
    response, failures = checked(response, checking or Checking(found_wines))
    if empty_after_checks(response):
        return ParseResult(error=failure_message(failures), checks_failed=[f.check for f in failures])
    response = with_card_facts(response, found_wines)
    return ParseResult(
        text=answer_as_text(response),
        wine_ids=response.wine_ids(),
        response=response,
        checks_failed=[f.check for f in failures],
    )


def with_card_facts(response: SommelierResponse, found_wines: Mapping[str, Wine]) -> SommelierResponse:
    """Each wine's card text from the catalogue (grapes, notes) beside the model's reason."""
    wines = [w.model_copy(update={"facts": card_facts(found_wines[w.wine_id or ""])}) for w in response.wines]
    return response.model_copy(update={"wines": wines})


def _legacy_as_response(parsed: ParsedResponse) -> dict[str, Any]:
    """A model that answered in the old [INTRO][WINE:n][CLOSING] format still gets validated and grounded."""
    wines = [
        {"wine_name": name, "description": body} for name, body in zip(parsed.wine_names, parsed.wines, strict=False)
    ]
    return {
        "response_type": "recommendation" if wines else "informational",
        "intro": parsed.intro,
        "wines": wines,
        "closing": parsed.closing or "Подобрать что-нибудь ещё?",
        "guard_type": None,
    }


def parse_legacy(text: str) -> ParsedResponse:
    """The old plain-text format `[INTRO] … [WINE:1] … [CLOSING] …`, or a heuristic split of paragraphs."""
    parts = _LEGACY_BLOCK.split(text)
    if len(parts) > 1:
        parsed = ParsedResponse(is_structured=True)
        for tag, body in zip(parts[1::2], parts[2::2], strict=False):
            body = body.strip()
            tag = tag.upper()
            if tag == "INTRO":
                parsed.intro = body
            elif tag == "CLOSING":
                parsed.closing = body
            elif body:
                parsed.wines.append(body)
                first_line = body.splitlines()[0]
                parsed.wine_names.append(re.sub(r"[*_#]+", "", first_line.split("—")[0].split(":")[0]).strip())
        return parsed
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    if not paragraphs:
        return ParsedResponse()
    if len(paragraphs) == 1:
        return ParsedResponse(intro=paragraphs[0])
    return ParsedResponse(intro=paragraphs[0], wines=paragraphs[1:-1], closing=paragraphs[-1])


# ---------------------------------------------------------------------------
# What the customer reads is plain Russian text: Markdown emphasis taken out, the language checked.
#
# Models write **bold** despite the prompt (Claude does in every caption), and some answer in English.
# Telegram shows Markdown marks literally in HTML parse mode, so the marks are removed from every text
# field before validation (the words stay). The language check is a validation error like any other:
# the model is asked once more, in Russian, and a second English answer ends in the degraded answer.
# ---------------------------------------------------------------------------

# Paired emphasis marks around a span that does not start or end with a space: **x**, __x__, *x*, _x_, ~~x~~.
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.DOTALL)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.DOTALL)
_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_EM_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_BULLET_STAR = re.compile(r"^(\s*)[*+]\s+", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:https?://|tg://)[^)\s]+\)")

_MARKUP = re.compile(r"<[^<>]{1,200}>|https?://\S+")  # tags and links are not language
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
MIN_RUSSIAN_SHARE = 0.6  # of the letters, after the wines' own (often Latin) names are taken out
MIN_LETTERS_TO_JUDGE = 12

LANGUAGE_ERROR = (
    "ответ написан не по-русски. Покупатель читает по-русски: напиши вступление, описания вин и "
    "заключительную фразу на русском языке (названия вин оставь как в каталоге)"
)


def plain_text(text: str) -> str:
    """The text without Markdown emphasis, inline code, headings, star bullets or link syntax."""
    previous = None
    while previous != text:  # nested marks (***x***, **_x_**) come off layer by layer
        previous = text
        text = _STRONG.sub(r"\2", text)
        text = _STRIKE.sub(r"\1", text)
        text = _EM_STAR.sub(r"\1", text)
        text = _EM_UNDERSCORE.sub(r"\1", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _HEADING.sub("", text)
    return _BULLET_STAR.sub(r"\1• ", text)


_OPEN_MARKS = re.compile(r"\*\*|__|~~|`")
_OPEN_EMPHASIS = re.compile(r"(?<![\w*_])[*_](?=\w[^*_]*$)")


def plain_draft(text: str) -> str:
    """A text still being written: `plain_text`, and marks whose closing half has not arrived yet removed."""
    text = plain_text(text)
    return _OPEN_EMPHASIS.sub("", _OPEN_MARKS.sub("", text))


def plain_answer(data: Any) -> Any:
    """The parsed answer with `plain_text` applied to every customer-facing text field."""
    if not isinstance(data, dict):
        return data
    cleaned = dict(data)
    for key in ("intro", "closing"):
        if isinstance(cleaned.get(key), str):
            cleaned[key] = plain_text(cleaned[key])
    wines = cleaned.get("wines")
    if isinstance(wines, list):
        cleaned["wines"] = [
            {
                **wine,
                **{
                    k: plain_text(wine[k])
                    for k in ("wine_name", "description", "reason")
                    if isinstance(wine.get(k), str)
                },
            }
            if isinstance(wine, dict)
            else wine
            for wine in wines
        ]
    return cleaned


def russian_share(texts: Iterable[str], names: Iterable[str] = ()) -> float | None:
    """Cyrillic letters as a share of all letters, with the given names taken out; None if too short."""
    text = _MARKUP.sub(" ", " ".join(texts))
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = text.replace(name, " ")
    cyrillic = len(_CYRILLIC.findall(text))
    latin = len(_LATIN.findall(text))
    if cyrillic + latin < MIN_LETTERS_TO_JUDGE:
        return None
    return cyrillic / (cyrillic + latin)


def language_problem(response: Any, found_wines: Mapping[str, Wine]) -> str | None:
    """LANGUAGE_ERROR when the customer-facing text of a SommelierResponse is not Russian."""
    texts = [response.intro, response.closing] + [w.description for w in response.wines]
    names: list[str] = []
    for rec in response.wines:
        names.append(rec.wine_name)
        wine = found_wines.get(rec.wine_id or "")
        if wine is not None:
            names += [wine.name, wine.producer, wine.region, *wine.grape_varieties]
    for wine in found_wines.values():  # an answer about a wine on the table names it without showing it
        names += [wine.name, wine.producer]
    share = russian_share(texts, names)
    if share is not None and share < MIN_RUSSIAN_SHARE:
        return LANGUAGE_ERROR
    return None
