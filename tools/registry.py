"""The one list of tools: every `Tool` subclass defined in a module of this package, found at import.

From it come both the planner's catalogue (`catalogue`) and the tools worker's activities (`activities`),
so the two cannot drift: a tool is offered to the planner exactly when its activity is registered.
Which tools a deployment uses is its `tools` setting (default: each tool's `offered_by_default`).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import time
from collections.abc import Awaitable, Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING

from temporalio import activity
from temporalio.exceptions import ApplicationError

import tools as package
from contracts.payload_limits import STEP_OUTPUT_BYTES, trimmed_to_bytes
from contracts.query_path import StepInput, StepOutput
from contracts.redaction import redact_text
from contracts.tool_spec import ToolAccess, ToolScope, ToolSpec
from tools.base import Tool
from tools.cache import ResultCache

if TYPE_CHECKING:
    from backends import Backends
    from service.agent_metrics import AgentMetrics

# Modules of the frame, not tools: the base classes, this registry and the result cache. A tool's spec
# (`ToolSpec`) lives in contracts/tool_spec.py, where the plan parser reads it too.
_FRAME_MODULES = {"base", "registry", "cache", "ontology_tool", "action_tool"}


@cache
def all_tools() -> dict[str, Tool]:
    """name -> tool, for every concrete Tool in the package's modules, in the order the planner sees them."""
    found: dict[str, Tool] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name in _FRAME_MODULES:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Tool) and not inspect.isabstract(cls) and cls.__module__ == module.__name__:
                tool = cls()
                if tool.name in found:
                    raise RuntimeError(f"two tools are named {tool.name!r}")
                found[tool.name] = tool
    return dict(sorted(found.items(), key=lambda item: (item[1].spec.position, item[0])))


def tool(name: str) -> Tool | None:
    return all_tools().get(name)


def default_tool_names() -> list[str]:
    return [name for name, t in all_tools().items() if t.spec.offered_by_default]


def enabled_tools(backends: Backends, names: Iterable[str] | None = None) -> list[Tool]:
    """The tools this worker hosts: the named ones (default: those offered by default) that its backends
    can run. An unknown name is a configuration error."""
    wanted = list(names) if names is not None else default_tool_names()
    unknown = [n for n in wanted if n not in all_tools()]
    if unknown:
        raise ValueError(f"unknown tools: {', '.join(unknown)}; known: {', '.join(all_tools())}")
    return [all_tools()[n] for n in wanted if all_tools()[n].available(backends)]


async def catalogue(
    backends: Backends,
    names: Iterable[str] | None = None,
    scope: ToolScope | None = None,
    access: dict[str, ToolAccess] | None = None,
) -> dict[str, ToolSpec]:
    """What the planner may use right now (a tool whose choices are found at run time may have none). With
    `scope` (a request's group and state), only the tools and choices it admits, as TrustGraph's agent
    filters its tools; `access`: the deployment's groups for built-in tools (`tool_groups`)."""
    specs: dict[str, ToolSpec] = {}
    for t in enabled_tools(backends, names):
        if scope is not None and not scope.admits((access or {}).get(t.name, t.spec.access)):
            continue
        spec = await t.describe(backends, scope)
        if spec is not None:
            specs[spec.name] = spec
    return specs


def activities(
    backends: Backends,
    names: Iterable[str] | None = None,
    cache: ResultCache | None = None,
    metrics: AgentMetrics | None = None,
) -> list[Callable[[StepInput], Awaitable[StepOutput]]]:
    """One Temporal activity per enabled tool, named as the tool, with the result cache in front; each
    attempt is counted in `metrics` as it ends: once per result the workflow receives (a tool's error that
    Temporal retries is counted when it gives up for good, as a non-retryable error, or not at all)."""
    results = cache or ResultCache(0)
    return [_as_activity(t, backends, results, metrics) for t in enabled_tools(backends, names)]


def _as_activity(
    t: Tool, backends: Backends, results: ResultCache, metrics: AgentMetrics | None
) -> Callable[[StepInput], Awaitable[StepOutput]]:
    async def run(request: StepInput) -> StepOutput:
        started = time.monotonic()
        hit = results.get(request) if t.spec.cacheable else None
        if hit is not None:
            return hit  # no work done: not an attempt to count
        try:
            output = await t.run(request, backends)
        except ApplicationError as exc:
            if metrics is not None and exc.non_retryable:  # the attempt's end as the workflow sees it
                metrics.attempt(request.step, request.retry_count, time.monotonic() - started, None, request.rung)
            raise
        output = _within_history_limits(_redacted(output))
        output.execution_time_ms = int((time.monotonic() - started) * 1000)
        if metrics is not None:
            metrics.attempt(request.step, request.retry_count, time.monotonic() - started, output, request.rung)
        if t.spec.cacheable:
            results.put(request, output)
        return output

    run.__name__ = run.__qualname__ = f"tool_{t.name}"
    return activity.defn(name=t.name)(run)


def _redacted(output: StepOutput) -> StepOutput:
    """The result with secret-looking values redacted: it is recorded in the run's history and shown to the
    model, which needs no credential a graph or a tool happened to hold."""
    confidence = output.confidence.model_copy(update={"reasoning": redact_text(output.confidence.reasoning)})
    return output.model_copy(
        update={
            "output": redact_text(output.output),
            "confidence": confidence,
            "error": redact_text(output.error) if output.error else output.error,
        }
    )


def _within_history_limits(output: StepOutput) -> StepOutput:
    """A result too large for the workflow history is trimmed, and its confidence says so (a trimmed
    result may leave out what the question needs)."""
    text, size = trimmed_to_bytes(output.output, STEP_OUTPUT_BYTES)
    if text == output.output:
        return output
    note = f"output trimmed to {STEP_OUTPUT_BYTES // 1024} KiB of {size // 1024} KiB for the workflow history"
    reasoning = f"{output.confidence.reasoning}; {note}" if output.confidence.reasoning else note
    confidence = output.confidence.model_copy(update={"reasoning": reasoning})
    return output.model_copy(update={"output": text, "confidence": confidence})


def static_catalogue(names: Iterable[str] | None = None) -> dict[str, ToolSpec]:
    """The named tools' static specs (default: those offered by default), without asking any backend:
    for checking plans offline (tests, benchmarks)."""
    return {n: all_tools()[n].spec for n in (names if names is not None else default_tool_names())}
