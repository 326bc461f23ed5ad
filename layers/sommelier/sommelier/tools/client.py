"""The tool port: how the agent and the CLI call the tool function (DESIGN.md §1).

Two adapters with the same JSON contract: in-process (local runs, tests) and Lambda
invoke (`TOOL_FUNCTION_NAME` set, in AWS).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from sommelier.config import Settings
from sommelier.tracing import subsegment


class ToolClient(Protocol):
    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class InProcessTools:
    def __init__(self, database=None):
        self._database = database

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from sommelier.tools.handler import handle

        return handle({"tool": name, "arguments": arguments}, self._database)


class LambdaTools:
    def __init__(self, function_name: str, client=None):
        import boto3
        from botocore.config import Config

        self.function_name = function_name
        # The tool function may wait up to 50 s for Aurora to resume from 0 ACU (its timeout is 60 s).
        # Bound the wait just above that and retry once, so a stuck call can't eat the whole turn
        # (botocore's default is 60 s x 5).
        config = Config(connect_timeout=5, read_timeout=65, retries={"mode": "standard", "max_attempts": 2})
        self._client = client or boto3.client("lambda", config=config)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        payload = json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False).encode("utf-8")
        try:
            with subsegment("tool", tool=name):
                response = self._client.invoke(FunctionName=self.function_name, Payload=payload)
                body = response["Payload"].read()
        except Exception as exc:  # botocore raises many types; the contract is JSON back
            return {"error": f"the tool function could not be reached: {type(exc).__name__}", "retryable": True}
        if response.get("FunctionError"):
            return {"error": "the tool function failed", "retryable": True}
        try:
            result = json.loads(body)
        except ValueError:
            return {"error": "the tool function answered something that is not JSON"}
        return result if isinstance(result, dict) else {"error": "the tool function answered a non-object"}


def tools_from_settings(settings: Settings) -> ToolClient:
    if settings.tool_function_name:
        return LambdaTools(settings.tool_function_name)
    return InProcessTools()
