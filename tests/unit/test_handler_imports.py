"""Each Lambda handler imports only what its cold start needs (measured in BENCHMARKS.md `imports`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gate  # imports each handler in a fresh interpreter

ROOT = Path(__file__).resolve().parents[2]

# handler file -> modules it must not load at import time, and why
NOT_IMPORTED = {
    # The webhook acknowledges fast: no LLM stack, no database driver.
    # Nor the Bot API client (httpx2) or uvicorn: Mangum runs the Starlette app in-process.
    "functions/webhook/ingress.py": (
        "openai",
        "sommelier.agent.loop",
        "numpy",
        "psycopg",
        "httpx2",
        "sommelier.telegram.client",
        "uvicorn",
    ),
    # The agent: the openai SDK (~650 ms) loads with the first LLM client, the offline responder only when it answers.
    "functions/webhook/agent.py": (
        "openai",
        "aiohttp",
        "sommelier.offline",
        "sommelier.embeddings.openai_provider",
    ),
    # The tool function: pydantic and the catalogue model only when an import arrives (~80 ms).
    "functions/wine_tools/app.py": ("openai", "pydantic", "sommelier.domain.records", "numpy", "sommelier.agent"),
}


@pytest.mark.parametrize("handler", sorted(NOT_IMPORTED))
def test_handler_module_loads_only_what_it_needs(handler):
    path = ROOT / handler
    code = (
        "import importlib.util, json, sys; "
        f"sys.path.insert(0, {str(path.parent)!r}); "
        f"spec = importlib.util.spec_from_file_location('handler_under_test', {str(path)!r}); "
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
        f"print(json.dumps([n for n in {list(NOT_IMPORTED[handler])!r} if n in sys.modules]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
