"""`sommelier invoke FUNCTION EVENT.json`: run a function of template.yaml on an event, in-process, no Docker.

Like `sam local invoke`, but in this Python process:

- the function is found in template.yaml by logical id (case-insensitive) or a shorthand
  (`webhook`, `agent`, `tools`, `migrate`);
- its environment = the template's literal values (Globals merged; intrinsics are unset locally)
  <- the function's entry in an env-vars file (`sam local invoke --env-vars` format; default
  events/local-env.json) <- the current process environment (a variable already set wins);
- the handler module is loaded from <CodeUri>/<module>.py in a fresh namespace, with <CodeUri>
  on sys.path (as /var/task is in Lambda), and called with a realistic LambdaContext;
- the result is printed to stdout as JSON; the function's logs go to stderr. The environment,
  sys.path and the function's own modules are restored afterwards.

Exit codes: 0 ok, 1 the handler (or its import) raised, 2 unknown function / unreadable event or files.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import os
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.markup import escape

from sommelier_dev.cli.output import console, print_json

if TYPE_CHECKING:
    from sommelier_dev.devtools.template import FunctionSpec

FAKE_ACCOUNT_ID = "123456789012"
DEFAULT_REGION = "eu-central-1"


def fail(message: str, code: int = 1) -> int:
    """Like output.fail, but never wrapped: the error stays on one line for scripts and logs."""
    console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    return code


class InvokeError(Exception):
    """A problem with the inputs (exit 2), not with the handler."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "invoke",
        help="run a function from template.yaml on a sample event, with its environment, without Docker",
        description="Run a template.yaml function in-process on an event (like `sam local invoke`, no Docker).",
    )
    parser.add_argument("function", help="logical id (e.g. WineToolsFunction) or webhook / agent / tools / migrate")
    parser.add_argument("event", help="the event JSON file ('-' reads stdin), e.g. events/tool_search_wines.json")
    parser.add_argument(
        "--env-vars",
        metavar="FILE",
        default=None,
        help="environment overrides in `sam local invoke --env-vars` format "
        "(default: events/local-env.json next to the template, when present)",
    )
    parser.add_argument(
        "--template",
        "-t",
        metavar="FILE",
        default=None,
        help="the SAM template (default: ./template.yaml, else the checkout's)",
    )
    parser.add_argument("--debug", action="store_true", help="print the full traceback when the handler raises")
    parser.set_defaults(run=run)


# ------------------------------------------------------------------------------ context ---


class LambdaContext:
    """What the Lambda Python runtime passes as `context`, with a real countdown."""

    def __init__(self, function_name: str, memory_mb: int, timeout_s: int, region: str):
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = memory_mb
        self.invoked_function_arn = f"arn:aws:lambda:{region}:{FAKE_ACCOUNT_ID}:function:{function_name}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        today = datetime.now(UTC).strftime("%Y/%m/%d")
        self.log_stream_name = f"{today}/[$LATEST]{uuid.uuid4().hex}"
        self.identity = None
        self.client_context = None
        self.tenant_id = None
        self.timeout_s = timeout_s
        self._deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


# ------------------------------------------------------------------------------ inputs ----


def _read_event(source: str) -> Any:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvokeError(f"cannot read the event {source}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvokeError(f"the event {source} is not valid JSON: {exc}") from None


def _env_file_values(path: Path, logical_id: str) -> dict[str, str]:
    """`sam local invoke --env-vars` format: {"Parameters": {...all functions}, "<LogicalId>": {...}}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InvokeError(f"cannot read the env-vars file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    except ValueError as exc:
        raise InvokeError(f"the env-vars file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvokeError(f"the env-vars file {path} must be a JSON object of functions")
    values: dict[str, str] = {}
    for section in ("Parameters", logical_id):
        entries = data.get(section) or {}
        if not isinstance(entries, dict):
            raise InvokeError(f"{path}: {section!r} must be an object of variables")
        for name, value in entries.items():
            if value is None:
                continue
            values[str(name)] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return values


def build_environment(
    spec: FunctionSpec, env_file: Path | None, process_env: dict[str, str] | None = None
) -> dict[str, str]:
    """template literals <- env-vars file <- the process environment (a non-empty variable wins)."""
    process_env = dict(os.environ if process_env is None else process_env)
    layered = {name: value for name, value in spec.environment.items() if value != ""}
    if env_file is not None:
        layered.update(_env_file_values(env_file, spec.logical_id))
    for name in list(layered):
        if process_env.get(name, "").strip():
            layered[name] = process_env[name]
    return layered


def _lambda_variables(spec: FunctionSpec, function_name: str, region: str) -> dict[str, str]:
    """What the Lambda runtime sets, for code that looks; AWS_SAM_LOCAL keeps X-Ray off."""
    return {
        "AWS_LAMBDA_FUNCTION_NAME": function_name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function_name}",
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_SAM_LOCAL": "true",
        "LAMBDA_TASK_ROOT": str(spec.code_dir),
        "_HANDLER": spec.handler,
    }


# ------------------------------------------------------------------------------ running ---


@contextlib.contextmanager
def _environment(overrides: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    try:
        os.environ.update(overrides)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _logs_to_stderr() -> Iterator[None]:
    """stdout is for the result: route print() and stdout log handlers (Powertools) to stderr."""
    stdout = sys.stdout
    targets = {id(stdout), id(sys.__stdout__)}
    swapped: list[tuple[logging.StreamHandler[TextIO], TextIO]] = []
    loggers = [logging.getLogger()] + [
        item for item in list(logging.Logger.manager.loggerDict.values()) if isinstance(item, logging.Logger)
    ]
    for item in loggers:
        for handler in list(item.handlers):
            if isinstance(handler, logging.StreamHandler) and id(getattr(handler, "stream", None)) in targets:
                previous = handler.setStream(sys.stderr)
                if previous is not None:
                    swapped.append((handler, previous))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        for handler, previous in swapped:
            with contextlib.suppress(Exception):
                handler.setStream(previous)


@contextlib.contextmanager
def _code_on_path(code_dir: Path) -> Iterator[None]:
    """<CodeUri> first on sys.path; its modules (e.g. a sibling `app`) are dropped afterwards."""
    before = set(sys.modules)
    entry = str(code_dir)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)
        for name in set(sys.modules) - before:
            file = getattr(sys.modules.get(name), "__file__", None) or ""
            if file and Path(file).resolve().is_relative_to(code_dir):
                sys.modules.pop(name, None)


def _load_handler(spec: FunctionSpec) -> Callable[[Any, Any], Any]:
    file = spec.handler_file
    if not spec.handler_module or not spec.handler_function:
        raise InvokeError(f"{spec.logical_id}: Handler {spec.handler!r} is not 'module.function'")
    if not file.is_file():
        raise InvokeError(f"{spec.logical_id}: the handler module {file} does not exist")
    module_name = f"sommelier_invoke_{spec.logical_id}_{spec.handler_module.replace('.', '_')}_{uuid.uuid4().hex[:8]}"
    module_spec = importlib.util.spec_from_file_location(module_name, file)
    if module_spec is None or module_spec.loader is None:
        raise InvokeError(f"{spec.logical_id}: the handler module {file} cannot be loaded")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # as an import would (dataclasses, pickling); dropped afterwards
    module_spec.loader.exec_module(module)  # may raise: reported like Runtime.ImportModuleError
    function: Callable[[Any, Any], Any] | None = getattr(module, spec.handler_function, None)
    if not callable(function):
        raise InvokeError(f"{spec.logical_id}: {file.name} has no function {spec.handler_function!r}")
    return function


def _one_line(exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__


def _default_env_file(spec: FunctionSpec) -> Path | None:
    base = spec.template_path.parent if spec.template_path else Path.cwd()
    # events/local-env.json is for `sam local` (loopback services); this one keeps everything in-process.
    candidate = base / "events" / "local-env.json"
    return candidate if candidate.is_file() else None


def run(args: argparse.Namespace) -> int:
    from sommelier_dev.devtools.template import TemplateError, UnknownFunction, find_function

    try:
        spec = find_function(args.function, args.template)
    except UnknownFunction as exc:
        return fail(str(exc), code=2)
    except TemplateError as exc:
        return fail(str(exc), code=2)
    try:
        event = _read_event(args.event)
        env_file = Path(args.env_vars) if args.env_vars else _default_env_file(spec)
        if env_file is not None and not env_file.is_file():
            raise InvokeError(f"the env-vars file {env_file} does not exist")
        environment = build_environment(spec, env_file)
    except InvokeError as exc:
        return fail(str(exc), code=2)

    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION
    function_name = f"sommelier-{spec.logical_id}-local"
    overrides = {**_lambda_variables(spec, function_name, region), **environment}
    # A variable the developer already set wins over the Lambda defaults too.
    overrides = {k: v for k, v in overrides.items() if not os.environ.get(k, "").strip() or k in environment}

    context = LambdaContext(function_name, spec.memory, spec.timeout, region)
    started = time.monotonic()
    try:
        with _environment(overrides), _code_on_path(spec.code_dir), _logs_to_stderr():
            try:
                handler = _load_handler(spec)
            except InvokeError:
                raise
            except Exception as exc:  # Lambda reports this as Runtime.ImportModuleError
                raise _HandlerFailed(exc, phase=f"importing {spec.handler_file.name}") from exc
            try:
                result = handler(event, context)
            except Exception as exc:
                raise _HandlerFailed(exc, phase="running the handler") from exc
    except InvokeError as exc:
        return fail(str(exc), code=2)
    except _HandlerFailed as failure:
        if args.debug:
            traceback.print_exception(failure.error, file=sys.stderr)
        _report(context, started)
        return fail(f"{spec.logical_id} failed while {failure.phase}: {_one_line(failure.error)}", code=1)
    _report(context, started)
    print_json(result)
    return 0


class _HandlerFailed(Exception):
    def __init__(self, error: BaseException, phase: str):
        super().__init__(str(error))
        self.error = error
        self.phase = phase


def _report(context: LambdaContext, started: float) -> None:
    elapsed_ms = (time.monotonic() - started) * 1000
    line = (
        f"REPORT RequestId: {context.aws_request_id} Duration: {elapsed_ms:.2f} ms "
        f"Timeout: {context.timeout_s} s Memory Size: {context.memory_limit_in_mb} MB"
    )
    console.print(line, markup=False, highlight=False, soft_wrap=True)
    if elapsed_ms > context.timeout_s * 1000:
        console.print(
            f"warning: {elapsed_ms / 1000:.1f} s is over the function's {context.timeout_s} s timeout; "
            "Lambda would have stopped it",
            markup=False,
            soft_wrap=True,
        )
