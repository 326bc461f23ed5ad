"""Guard rails in `make test`: lint, formatting and types, run as the tools run them from a shell.

A missing dev dependency fails the suite (a plain import, never a skip): `pip install -e .[dev]`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mypy  # noqa: F401 - the dev extra must be installed; this import fails loudly otherwise
import ruff  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    result = run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_tree_is_formatted():
    result = run("ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, "run `ruff format`:\n" + result.stdout + result.stderr


def test_mypy_passes_on_the_domain_package():
    result = run("mypy", "--no-incremental")  # files and options: [tool.mypy] in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr
