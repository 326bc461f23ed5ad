"""The agent: the conversation loop, the LLM client, prompts, guards and the answer's checks."""
