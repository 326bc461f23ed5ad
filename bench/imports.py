"""`imports`: import time of each Lambda handler module in a fresh process (a cold-start proxy).

Each sample is a new interpreter that loads the handler file by path, the way the Lambda runtime
does (the function folder on sys.path, `sommelier` importable as from the layer), and times only
the import with perf_counter; the interpreter's own start-up is reported separately. The LangChain
agent module (bench/langchain_agent.py) is measured the same way, for the side-by-side comparison.

In full mode a second series runs "as deployed": an isolated interpreter (-I -S: no venv) that
sees only the layer's packages as `pip install --target` puts them (with the .pyc pip compiles;
bench/sizes.py builds and caches it for this machine's platform), boto3 (the Lambda runtime has
it), `sommelier` with the unchecked-hash bytecode layers/sommelier/Makefile ships, and the handler
copied without __pycache__; `-B` keeps the interpreter from writing any .pyc, as in Lambda.
That is Lambda's situation: /var/task and /opt are read-only, so whatever ships without bytecode
(the function folders) compiles at every cold start, and packages that happen to be in the dev
venv (e.g. aiohttp, which openai imports when present) are not there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, Context, Figure, figure, log, median

NAME = "imports"

HANDLERS: dict[str, Path] = {
    "wine_tools/app.py": ROOT / "functions" / "wine_tools" / "app.py",
    "webhook/ingress.py": ROOT / "functions" / "webhook" / "ingress.py",
    "webhook/agent.py": ROOT / "functions" / "webhook" / "agent.py",
    "migrate/app.py": ROOT / "functions" / "migrate" / "app.py",
    "set_webhook/app.py": ROOT / "functions" / "set_webhook" / "app.py",
}
WEBHOOK_AS_DEPLOYED_TARGET_MS = 250.0
LANGCHAIN_AGENT = ROOT / "bench" / "langchain_agent.py"
TOOL_HANDLER_TARGET_MS = 300.0

# Runs in the fresh interpreter: import the file by path and print the elapsed milliseconds.
_PROBE = r"""
import sys, time
started = time.perf_counter()
cpu_started = time.process_time()
import importlib.util
path, folder = sys.argv[1], sys.argv[2]
sys.path[:0] = [folder, *sys.argv[3:]]
spec = importlib.util.spec_from_file_location("handler_under_test", path)
module = importlib.util.module_from_spec(spec)
sys.modules["handler_under_test"] = module
spec.loader.exec_module(module)
elapsed = (time.perf_counter() - started) * 1000
cpu = (time.process_time() - cpu_started) * 1000
print("IMPORT_MS", elapsed, len(sys.modules), cpu)
"""


def _environment(isolated: bool = False) -> dict[str, str]:
    if isolated:
        return {
            "PATH": os.environ.get("PATH", ""),
            "PYTHONDONTWRITEBYTECODE": "1",
            "AWS_DEFAULT_REGION": "eu-central-1",
            "LANG": "C.UTF-8",
        }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_", "DATABASE_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "layers" / "sommelier"), str(ROOT)])
    # this machine's shell sets PYTHONDONTWRITEBYTECODE=1; let the warm series use (and write) .pyc files
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    return env


class Deployed:
    """Paths for the as-deployed series: our code copied without bytecode, the layer, boto3."""

    def __init__(self, workdir: Path):
        import shutil

        from bench import sizes

        self.root = workdir / "as-deployed"
        if not self.root.exists():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(
                ROOT / "layers" / "sommelier" / "sommelier", self.root / "python" / "sommelier", ignore=ignore
            )
            shutil.copytree(ROOT / "functions", self.root / "functions", ignore=ignore)
            # As layers/sommelier/Makefile builds it: our package ships unchecked-hash bytecode.
            import compileall
            import py_compile

            compileall.compile_dir(
                self.root / "python" / "sommelier",
                quiet=1,
                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
            )
        layer, _ = sizes.pip_target(sizes.requirement_lines(), (), sizes.host_layer_label())
        self.paths = [str(self.root / "python"), str(layer / "python")]
        self.paths.append(str(sizes.boto3_folder(workdir)))

    def handler(self, path: Path) -> Path:
        return self.root / "functions" / path.relative_to(ROOT / "functions")


def import_once(path: Path, *, deployed: Deployed | None = None) -> tuple[float, float, int, float]:
    """(import ms, whole process ms, modules loaded, import CPU ms) for one fresh interpreter.

    The CPU time is what a busy machine disturbs least (it leaves out the waits for a core)."""
    started = time.perf_counter()
    if deployed is not None:
        path = deployed.handler(path)
        # -B: nothing is written, like Lambda's read-only /opt (-I ignores PYTHONDONTWRITEBYTECODE)
        command = [sys.executable, "-B", "-I", "-S", "-c", _PROBE, str(path), str(path.parent), *deployed.paths]
    else:
        command = [sys.executable, "-c", _PROBE, str(path), str(path.parent)]
    result = subprocess.run(
        command,
        cwd=str(path.parent),
        env=_environment(deployed is not None),
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = (time.perf_counter() - started) * 1000
    match = re.search(r"IMPORT_MS ([0-9.]+) (\d+) ([0-9.]+)", result.stdout)
    if result.returncode != 0 or not match:
        raise RuntimeError(f"importing {path} failed: {result.stderr.strip()[-400:]}")
    return float(match.group(1)), wall, int(match.group(2)), float(match.group(3))


def top_imports(path: Path, limit: int = 8) -> list[dict[str, float | str]]:
    """The slowest packages by cumulative import time (python -X importtime, one run; nested packages
    are counted inside their importer too, so the figures overlap)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _PROBE, str(path), str(path.parent)],
        cwd=str(path.parent),
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    totals: dict[str, float] = {}
    for line in result.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not match:
            continue
        cumulative, name = int(match.group(2)), match.group(4)
        top = name.split(".")[0]  # a package's first import carries its whole cumulative time
        totals[top] = max(totals.get(top, 0.0), cumulative / 1000)
    ranked = sorted(totals.items(), key=lambda item: -item[1])[:limit]
    return [{"package": name, "cumulative_ms": round(ms, 1)} for name, ms in ranked]


def measure(path: Path, repeats: int, *, deployed: Deployed | None = None) -> dict[str, list[float]]:
    imports: list[float] = []
    walls: list[float] = []
    cpus: list[float] = []
    modules = 0
    for _ in range(repeats):
        ms, wall, modules, cpu = import_once(path, deployed=deployed)
        imports.append(ms)
        walls.append(wall)
        cpus.append(cpu)
    return {"import_ms": imports, "process_ms": walls, "modules": [modules], "cpu_ms": cpus}


def repeats(ctx: Context) -> int:
    if ctx.smoke:
        return 1
    return max(ctx.runs, 5 if ctx.quick else 10)


def langchain_available() -> bool:
    from bench.langchain_compare import missing_packages

    return not missing_packages()


def run(ctx: Context) -> list[Figure]:
    n = repeats(ctx)
    figures: list[Figure] = []
    shared: dict[str, dict[str, float]] = {}
    deployed_paths: Deployed | None = None
    # one untimed import of each first (full mode), so every measured sample finds a warm disk cache
    if not ctx.quick:
        for path in HANDLERS.values():
            import_once(path)
    for label, path in HANDLERS.items():
        result = measure(path, n)
        details = {"process_ms_median": round(median(result["process_ms"]), 1), "modules_loaded": result["modules"][0]}
        if not ctx.quick:
            details["slowest_imports"] = top_imports(path)
        target = TOOL_HANDLER_TARGET_MS if label == "wine_tools/app.py" else None
        figures.append(figure(NAME, f"{label} import", "ms", result["import_ms"], at_most=target, details=details))
        if not ctx.quick:
            if deployed_paths is None:
                deployed_paths = Deployed(ctx.workdir)
            import_once(path, deployed=deployed_paths)
            deployed = measure(path, max(3, n // 2), deployed=deployed_paths)
            figures.append(
                figure(
                    NAME,
                    f"{label} import as deployed (the layer as layers/sommelier/Makefile builds it, nothing written)",
                    "ms",
                    deployed["import_ms"],
                    at_most=WEBHOOK_AS_DEPLOYED_TARGET_MS if label == "webhook/ingress.py" else None,
                    details={"modules_loaded": deployed["modules"][0]},
                )
            )
            figures.append(
                figure(
                    NAME,
                    f"{label} import as deployed, CPU time",
                    "ms",
                    deployed["cpu_ms"],
                    at_most=WEBHOOK_AS_DEPLOYED_TARGET_MS if label == "webhook/ingress.py" else None,
                )
            )
        shared[label] = {"median_ms": median(result["import_ms"]), "runs": result["import_ms"]}
        log(
            f"imports: {label}: median {median(result['import_ms']):.0f} ms "
            f"(process {details['process_ms_median']:.0f} ms, {details['modules_loaded']} modules)"
        )
    if langchain_available():
        if not ctx.quick:
            import_once(LANGCHAIN_AGENT)
        result = measure(LANGCHAIN_AGENT, n)
        details = {"process_ms_median": round(median(result["process_ms"]), 1), "modules_loaded": result["modules"][0]}
        if not ctx.quick:
            details["slowest_imports"] = top_imports(LANGCHAIN_AGENT)
        figures.append(figure(NAME, "langchain agent module import", "ms", result["import_ms"], details=details))
        shared["langchain_agent"] = {"median_ms": median(result["import_ms"]), "runs": result["import_ms"]}
        log(f"imports: langchain agent module: median {median(result['import_ms']):.0f} ms")
    else:
        ctx.note(NAME, "LangChain not installed: its agent module import was not measured")
    ctx.shared[NAME] = shared
    return figures
