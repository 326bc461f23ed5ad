"""Cold imports as deployed and the layer's size: this tree and another (a git worktree of an earlier
commit), side by side in one run.

    git worktree add /tmp/before <commit>
    .venv/bin/python -m bench.compare_trees /tmp/before [--repeats 15] [--output FILE]

Each handler of `functions/` is imported "as deployed" (bench/imports.py: an isolated interpreter that
sees only the layer's third-party packages, boto3, our package with the unchecked-hash bytecode the layer
ships, and the handler without bytecode), alternating the two trees sample by sample so that the machine's
noise falls on both alike. Both trees import with the same third-party packages (the lock's runtime
requirements), so the imports differ by our package alone; the package is laid out as each tree's layer
build ships it (with .pyc; gzipped language tables where the tree's build packs them).

Sizes: each tree's own layer is built by its own Makefile, as `sam build` makes it (arm64, python3.12, no
RDS CA download): the whole layer, our package in it, and the third-party part. Reported: each handler's
median import (wall and CPU) per tree and the ratio this/other, and the sizes. The paired ratio is the
median of each sample's this/other CPU ratio (the two imports of a sample run back to back), which a slow
minute of the machine moves far less than it moves either median.
"""

from __future__ import annotations

import argparse
import compileall
import json
import py_compile
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import sizes
from bench.common import ROOT, median
from bench.imports import import_once

HANDLERS = [
    "webhook/ingress.py",
    "webhook/agent.py",
    "wine_tools/app.py",
    "migrate/app.py",
    "set_webhook/app.py",
    "weekly_report/app.py",
    "catalog_drop/app.py",
]


class DeployedTree:
    """One tree laid out as the layer and the functions ship: our package with bytecode, handlers without."""

    def __init__(self, tree: Path, workdir: Path, third_party: list[str]):
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        self.root = workdir
        self.tree = tree
        shutil.copytree(tree / "layers" / "sommelier" / "sommelier", workdir / "python" / "sommelier", ignore=ignore)
        shutil.copytree(tree / "functions", workdir / "functions", ignore=ignore)
        pack = tree / "layers" / "sommelier" / "pack_data.py"
        if pack.is_file():  # the tree's layer build gzips the language tables: import them as it ships them
            subprocess.run(
                [sys.executable, str(pack), str(workdir / "python" / "sommelier")], check=True, capture_output=True
            )
        compileall.compile_dir(
            workdir / "python" / "sommelier", quiet=1, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
        )
        self.paths = [str(workdir / "python"), *third_party]

    def handler(self, path: Path) -> Path:
        return self.root / "functions" / path.relative_to(ROOT / "functions")

    @property
    def package_bytes(self) -> int:
        return sizes.tree_size(self.root / "python" / "sommelier")


def compare(other: Path, repeats: int) -> dict:
    layer, _ = sizes.pip_target(sizes.requirement_lines(), (), sizes.host_layer_label())
    with tempfile.TemporaryDirectory(prefix="compare-trees-") as work:
        third_party = [str(layer / "python"), str(sizes.boto3_folder(Path(work)))]
        trees = {
            "this": DeployedTree(ROOT, Path(work) / "this", third_party),
            "other": DeployedTree(other, Path(work) / "other", third_party),
        }
        samples: dict[str, dict[str, list[tuple[float, float]]]] = {name: {} for name in trees}
        for index in range(repeats):
            order = list(trees) if index % 2 == 0 else list(reversed(trees))
            for handler in HANDLERS:
                for name in order:
                    if not (trees[name].root / "functions" / handler).exists():
                        continue
                    imported, _, _, cpu = import_once(ROOT / "functions" / handler, deployed=trees[name])
                    samples[name].setdefault(handler, []).append((imported, cpu))
        third_party_bytes = sizes.tree_size(layer / "python")
        built = {name: built_layer_mb(tree.tree, Path(work) / f"built-{name}") for name, tree in trees.items()}
        return {
            "other_tree": str(other),
            "repeats": repeats,
            "imports_ms": {
                handler: {
                    name: {
                        "wall": round(median([wall for wall, _ in samples[name][handler]]), 1),
                        "cpu": round(median([cpu for _, cpu in samples[name][handler]]), 1),
                    }
                    for name in trees
                    if handler in samples[name]
                }
                for handler in HANDLERS
            },
            "paired_cpu_ratio": {
                handler: round(
                    median([this[1] / other[1] for this, other in zip(tree_samples, other_samples, strict=True)]), 3
                )
                for handler in HANDLERS
                if (tree_samples := samples["this"].get(handler)) and (other_samples := samples["other"].get(handler))
            },
            "package_mb": {name: round(tree.package_bytes / sizes.MB, 2) for name, tree in trees.items()},
            "third_party_mb": round(third_party_bytes / sizes.MB, 2),
            "layer_mb": {
                name: round((tree.package_bytes + third_party_bytes) / sizes.MB, 2) for name, tree in trees.items()
            },
            "built_layer_mb": built,
        }


def built_layer_mb(tree: Path, workdir: Path) -> dict[str, float]:
    """The tree's layer as its own Makefile builds it for Lambda: whole, our package, the rest (MB)."""
    site = sizes.built_layer(workdir, tree / "layers" / "sommelier")
    whole, package = sizes.tree_size(site), sizes.tree_size(site / "sommelier")
    return {
        name: round(size / sizes.MB, 2)
        for name, size in (("layer", whole), ("package", package), ("third_party", whole - package))
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the other tree (a worktree of an earlier commit)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    result = compare(args.other.resolve(), args.repeats)
    for handler, trees in result["imports_ms"].items():
        if {"this", "other"} <= trees.keys():
            ratio = trees["this"]["cpu"] / trees["other"]["cpu"] if trees["other"]["cpu"] else float("nan")
            print(
                f"{handler:24} this {trees['this']['wall']:7.1f} ms (cpu {trees['this']['cpu']:6.1f})"
                f"  other {trees['other']['wall']:7.1f} ms (cpu {trees['other']['cpu']:6.1f})  cpu ratio {ratio:.2f}"
                f"  paired {result['paired_cpu_ratio'][handler]:.2f}"
            )
    print(f"our package: this {result['package_mb']['this']} MB, other {result['package_mb']['other']} MB")
    print(f"layer: this {result['layer_mb']['this']} MB, other {result['layer_mb']['other']} MB")
    for name, built in result["built_layer_mb"].items():
        print(
            f"built layer ({name}): {built['layer']} MB, our package {built['package']} MB, the rest {built['third_party']} MB"
        )
    text = json.dumps(result, indent=2)
    if args.output:
        args.output.write_text(text + "\n", "utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
