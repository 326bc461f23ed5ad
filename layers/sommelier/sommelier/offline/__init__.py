"""The offline responder (docs/architecture.md): rule-based reading, the same tools, its own Russian wording.

Used when the LLM fails, and for the whole bot when no API key is configured.
"""

from sommelier.offline.reader import QueryIntent, read_query
from sommelier.offline.responder import OfflineAnswer, OfflineResponder

__all__ = ["OfflineAnswer", "OfflineResponder", "QueryIntent", "read_query"]
