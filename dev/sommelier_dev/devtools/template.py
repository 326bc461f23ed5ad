"""Read the functions of `template.yaml` for Docker-free local runs (`sommelier invoke`, `sommelier serve`).

The template is parsed with cfn-lint's decoder, which understands the short-form intrinsics
(`!Ref`, `!Sub`, `!GetAtt`, ...). cfn-lint is a development dependency, imported only when a
template is read. SAM `Globals.Function` is merged into every function the way SAM does it:
scalars are defaults, environment variables are merged key by key (the function wins).

Locally nothing of the stack exists, so an environment value that is an intrinsic function
(a queue URL, a table name, a secret ARN, a parameter) resolves to "" - unset (docs/architecture.md) -
and the code falls back to its in-process adapters: inline turns, in-process tools, no DynamoDB.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

SERVERLESS_FUNCTION = "AWS::Serverless::Function"
LAMBDA_DEFAULT_TIMEOUT = 3  # seconds, when neither the function nor Globals set one
LAMBDA_DEFAULT_MEMORY = 128  # MB
SHORTHANDS = {
    "webhook": "WebhookFunction",
    "ingress": "WebhookFunction",
    "agent": "AgentFunction",
    "tools": "WineToolsFunction",
    "tool": "WineToolsFunction",
    "wine_tools": "WineToolsFunction",
    "migrate": "MigrateFunction",
    "set_webhook": "SetWebhookFunction",
}


class TemplateError(RuntimeError):
    """The template can't be read (missing, invalid YAML, or cfn-lint not installed)."""


class UnknownFunction(LookupError):
    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = known
        super().__init__(f"no function {name!r} in the template; known: {', '.join(known) or 'none'}")


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    code_uri: str
    handler: str
    timeout: int
    memory: int
    environment: dict[str, str]
    routes: list[tuple[str, str]]
    runtime: str = ""
    condition: str | None = None
    template_path: Path | None = field(default=None, compare=False)

    @property
    def code_dir(self) -> Path:
        """CodeUri, relative to the template's directory (as `sam build` resolves it)."""
        base = self.template_path.parent if self.template_path else Path.cwd()
        return (base / self.code_uri).resolve()

    @property
    def handler_module(self) -> str:
        return self.handler.rpartition(".")[0]

    @property
    def handler_function(self) -> str:
        return self.handler.rpartition(".")[2]

    @property
    def handler_file(self) -> Path:
        """`ingress.handler` -> <CodeUri>/ingress.py; `pkg.mod.handler` -> <CodeUri>/pkg/mod.py."""
        return self.code_dir / (self.handler_module.replace(".", "/") + ".py")


def default_template_path() -> Path:
    """./template.yaml when run from a SAM project, else the checkout's."""
    here = Path.cwd() / "template.yaml"
    if here.is_file():
        return here
    from sommelier.settings import project_root

    return project_root() / "template.yaml"


def load_template(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The template as plain dicts/lists/strings; intrinsics look like {"Ref": ...}, {"Fn::Sub": ...}."""
    resolved = Path(path) if path else default_template_path()
    try:
        stat = resolved.stat()
    except OSError as exc:
        raise TemplateError(f"cannot read {resolved}: {exc.strerror or exc}") from None
    return _load(str(resolved.resolve()), stat.st_mtime_ns)


@lru_cache(maxsize=8)
def _load(path: str, _mtime_ns: int) -> dict[str, Any]:
    try:
        from cfnlint.decode import decode
    except ImportError:
        raise TemplateError(
            "reading template.yaml needs cfn-lint, a development dependency: pip install -e '.[dev]'"
        ) from None
    template, matches = decode(path)
    if template is None or not isinstance(template, dict):
        problem = matches[0].message if matches else "not a mapping"
        raise TemplateError(f"cannot parse {path}: {problem}")
    plain: dict[str, Any] = _plain(template)  # a mapping stays a mapping
    return plain


def _plain(node: Any) -> Any:
    """cfn-lint's node types (dict_node, str_node, ...) to plain Python values."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def _env_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value
    return ""  # an intrinsic function (or null): nothing of the stack exists locally


def _number(value: Any, parameters: dict[str, Any], default: int) -> int:
    if isinstance(value, dict) and isinstance(value.get("Ref"), str):
        value = (parameters.get(value["Ref"]) or {}).get("Default", default)
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def _routes(events: Any) -> list[tuple[str, str]]:
    routes: list[tuple[str, str]] = []
    if not isinstance(events, dict):
        return routes
    for event in events.values():
        if not isinstance(event, dict) or event.get("Type") not in ("HttpApi", "Api"):
            continue
        properties = event.get("Properties") or {}
        path, method = properties.get("Path"), properties.get("Method")
        if isinstance(path, str) and isinstance(method, str):
            routes.append((method.upper(), path))
    return routes


def functions(path: str | os.PathLike[str] | None = None) -> dict[str, FunctionSpec]:
    """Every AWS::Serverless::Function of the template, in template order, Globals merged."""
    template_path = Path(path) if path else default_template_path()
    template = load_template(template_path)
    parameters = template.get("Parameters") or {}
    globals_ = (template.get("Globals") or {}).get("Function") or {}
    global_env = ((globals_.get("Environment") or {}).get("Variables")) or {}
    specs: dict[str, FunctionSpec] = {}
    for logical_id, resource in (template.get("Resources") or {}).items():
        if not isinstance(resource, dict) or resource.get("Type") != SERVERLESS_FUNCTION:
            continue
        properties = resource.get("Properties") or {}
        merged = {**globals_, **properties}
        own_env = ((properties.get("Environment") or {}).get("Variables")) or {}
        environment = {name: _env_value(value) for name, value in {**global_env, **own_env}.items()}
        code_uri = merged.get("CodeUri")
        specs[logical_id] = FunctionSpec(
            logical_id=logical_id,
            code_uri=code_uri if isinstance(code_uri, str) else ".",
            handler=str(merged.get("Handler") or ""),
            timeout=_number(merged.get("Timeout"), parameters, LAMBDA_DEFAULT_TIMEOUT),
            memory=_number(merged.get("MemorySize"), parameters, LAMBDA_DEFAULT_MEMORY),
            environment=environment,
            routes=_routes(properties.get("Events")),
            runtime=str(merged.get("Runtime") or ""),
            condition=resource.get("Condition") if isinstance(resource.get("Condition"), str) else None,
            template_path=template_path,
        )
    return specs


def find_function(name: str, path: str | os.PathLike[str] | None = None) -> FunctionSpec:
    """By logical id (case-insensitive), a shorthand (webhook, agent, tools, migrate), or id minus "Function"."""
    specs = functions(path)
    by_lower = {logical_id.lower(): spec for logical_id, spec in specs.items()}
    wanted = name.strip().lower()
    for candidate in (wanted, SHORTHANDS.get(wanted, "").lower(), f"{wanted.replace('_', '')}function"):
        if candidate and candidate in by_lower:
            return by_lower[candidate]
    raise UnknownFunction(name, list(specs))


def http_routes(path: str | os.PathLike[str] | None = None) -> list[tuple[str, str, str]]:
    """(method, path, logical id) for every HttpApi/Api event of the template's functions."""
    return [(method, route, spec.logical_id) for spec in functions(path).values() for method, route in spec.routes]
