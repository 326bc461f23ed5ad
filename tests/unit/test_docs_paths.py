"""The living documents name files that exist: every backticked or linked repository path ending in
.py, .json, .sql, .md, .yaml, .toml or .sh resolves to a file relative to the repo root, the deployed
package, the dev package, dev/, layers/sommelier/ or the document's own folder.

A repository path is a link target, or a word in a code span with a folder in it (`telegram/router.py`):
a bare file name in a command (`sommelier catalog export wines.json`) is the user's file. Paths with
wildcards or placeholders (`*`, `NNNN`, `<...>`), absolute paths and URLs are skipped, and so are the
few paths below that name something outside the repository. BENCHMARKS.md is a record of past runs and
is not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# layers/sommelier: `sommelier/telegram/router.py`, as the package's files are named from the import root
# (dev/ does the same for `sommelier_dev/...`), e.g. in the traced file list of docs/architecture.md.
BASES = [ROOT, ROOT / "layers/sommelier/sommelier", ROOT / "dev/sommelier_dev", ROOT / "dev", ROOT / "layers/sommelier"]
DOCUMENTS = [
    "README.md",
    "RELIABILITY.md",
    *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")),
    "eval/README.md",
    "bench/README.md",
    "events/README.md",
]

CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK_TARGET = re.compile(r"\]\(([^)\s]+)")
PATH = re.compile(r"[\w./-]*\w\.(?:py|json|sql|md|yaml|toml|sh)\b")
PLACEHOLDER = re.compile(r"[*<>]|NNNN|://")
NOT_IN_THE_REPOSITORY = {
    "bench/results/latest.json",  # the benchmark's git-ignored output
    "catalog/incoming/autumn-2026.json",  # an S3 key in the photo bucket (events/catalog_drop.json)
}


def mentioned_paths(text: str) -> set[str]:
    """Every repository path in a code span or a link target (placeholders and URLs left out)."""
    words = [word for m in CODE_SPAN.finditer(text) for word in m.group(2).split() if "/" in word]
    words += [m.group(1).split("#")[0] for m in LINK_TARGET.finditer(text)]
    found = set()
    for word in words:
        if PLACEHOLDER.search(word):
            continue
        for match in PATH.finditer(word):
            # `a.py:12`, `a.py::test` and `a.py,` all name a.py; `a.json.report.txt` is not a .json file.
            if word[match.end() : match.end() + 1] not in ("", ":", ",", ";", ")", "'", '"', "]"):
                continue
            path = match.group(0).removeprefix("./")
            if not path.startswith("/") and path not in NOT_IN_THE_REPOSITORY:
                found.add(path)
    return found


def missing_paths(text: str, folder: Path) -> list[str]:
    """The mentioned paths that resolve to no file under any base (or the document's folder)."""
    bases = [*BASES, folder]
    return sorted(p for p in mentioned_paths(text) if not any((base / p).is_file() for base in bases))


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_path_in_the_document_exists(document):
    path = ROOT / document
    missing = missing_paths(path.read_text(encoding="utf-8"), path.parent)
    assert not missing, f"{document} names files that do not exist: {missing}"


def test_a_made_up_path_is_reported():
    text = "see `agent/nowhere.py` and [the loop](layers/sommelier/sommelier/agent/loop.py), `telegram/router.py`"
    assert missing_paths(text, ROOT) == ["agent/nowhere.py"]


def test_placeholders_and_urls_are_skipped():
    text = "`migrations/NNNN_name.sql`, `docs/*.md`, `<name>.py`, [x](https://example.com/a.py), `/tmp/a.json`"
    assert mentioned_paths(text) == set()
    assert mentioned_paths("`sommelier catalog export wines.json`, `python scripts/sam_test.py`") == {
        "scripts/sam_test.py"
    }


def test_the_count_under_the_trace_list_is_the_lists_length():
    """docs/architecture.md says how many files one offline turn passes through; the sentence under the list
    must count the list (tests/e2e/test_turn_trace.py keeps the list itself true)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text("utf-8")
    block = re.search(r"<!-- trace:begin -->\n(.*?)<!-- trace:end -->\n\n(\d+) files;", text, re.DOTALL)
    assert block, "the trace list must be followed by «N files;»"
    assert int(block.group(2)) == len(re.findall(r"^- `", block.group(1), re.MULTILINE))
