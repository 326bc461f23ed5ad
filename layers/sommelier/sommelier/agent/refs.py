"""A turn's short references to its wines: w1, w2 … instead of 36-character UUIDs (docs/architecture.md §6).

A wine's reference is its place in the turn's found wines (a dict kept in the order the wines were found:
the prefetched candidates first, then each tool result's new wines), so the prompt's rows, the tool results
and the answer's grounding read the same reference without any state of their own. The invariant this asks:
a turn's found wines only grow (a wine the prompt showed is never taken out of ``OnlineTurn.found``; one that
must not be shown is refused at grounding instead), and the rows are built from ``found`` in its order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sommelier.domain.wine import Wine


def ref_of(position: int) -> str:
    return f"w{position + 1}"


def refs_by_id(found: Iterable[str]) -> dict[str, str]:
    """Each found wine's reference, by id."""
    return {wine_id: ref_of(i) for i, wine_id in enumerate(found)}


def ids_by_ref(found: Mapping[str, Wine]) -> dict[str, str]:
    """Each reference's wine id."""
    return {ref_of(i): wine_id for i, wine_id in enumerate(found)}
