"""What the chat model costs: LLM_PRICE_PER_MTOK, dollars per million tokens.

The setting is "prompt,completion[,cached]", e.g. "3,15,0.3": prompt tokens read fresh, completion tokens,
and prompt tokens read from the provider's cache (default: the prompt price, no discount assumed). A cost
the provider reports itself (OpenRouter's usage.cost) wins over this estimate.
"""

from __future__ import annotations

from typing import NamedTuple


class LLMPrice(NamedTuple):
    prompt: float  # $ per million prompt tokens not read from the cache
    completion: float  # $ per million completion tokens (reasoning included: it is billed as completion)
    cached: float | None = None  # $ per million cached prompt tokens; None: the prompt price

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """Dollars for these tokens; cached tokens are the part of prompt_tokens read from the cache."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        cached_price = self.prompt if self.cached is None else self.cached
        fresh = prompt_tokens - cached
        return (fresh * self.prompt + cached * cached_price + completion_tokens * self.completion) / 1_000_000


# anthropic/claude-sonnet-4's list price: $3 prompt, $15 completion, $0.30 for a cache read.
DEFAULT_PRICE = LLMPrice(3.0, 15.0, 0.3)


def parse_price(raw: str | None) -> LLMPrice:
    """LLM_PRICE_PER_MTOK as an LLMPrice (DEFAULT_PRICE when unset). Raises ValueError naming the setting."""
    if raw is None or not raw.strip():
        return DEFAULT_PRICE
    try:
        numbers = [float(part) for part in raw.split(",")]
    except ValueError as exc:
        raise ValueError(f"LLM_PRICE_PER_MTOK must be numbers like 3,15 or 3,15,0.3, not {raw!r}") from exc
    if len(numbers) not in (2, 3) or any(n < 0 for n in numbers):
        raise ValueError(f"LLM_PRICE_PER_MTOK must be two or three non-negative numbers, not {raw!r}")
    return LLMPrice(numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else None)
