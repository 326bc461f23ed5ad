"""X-Ray subsegments around outside calls (LLM, tool, Telegram). Standard library only.

The handler shell (sommelier.observability.shell) installs a Powertools Tracer here when X-Ray is active;
without one (locally, in tests, in the webhook) `subsegment` does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_tracer: Any = None


def install_tracer(tracer: Any) -> None:
    global _tracer
    _tracer = tracer


def active_tracer() -> Any:
    return _tracer


@contextmanager
def subsegment(name: str, **annotations: Any) -> Iterator[None]:
    """An X-Ray subsegment named `name`, annotated; a no-op without a Tracer."""
    tracer = _tracer
    if tracer is None:
        yield
        return
    with tracer.provider.in_subsegment(name) as segment:
        for key, value in annotations.items():
            segment.put_annotation(key, value)
        yield
