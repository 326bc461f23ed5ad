"""The chat LLM: the OpenAI-compatible client, its streamed replies, provider quirks and learned capabilities."""
