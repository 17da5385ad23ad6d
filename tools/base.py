"""The interface every tool implements (one module per tool; tools/registry.py lists them).

A tool is one unit: its spec (what the planner sees), how it runs (as the Temporal activity named after
it), how its result is scored (evidence, not the LLM's say-so), and optionally a deterministic repair of
its arguments for the retry ladder's "adjusted" rung. `adjust` runs inside workflow code: it must be pure.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from confidence.ladder import Rung

if TYPE_CHECKING:
    from backends import Backends
    from contracts.query_path import StepInput, StepOutput
    from contracts.tool_spec import ToolScope, ToolSpec


class Tool(ABC):
    spec: ClassVar[ToolSpec]

    @property
    def name(self) -> str:
        return self.spec.name

    def available(self, backends: Backends) -> bool:
        """Whether this worker's backends can run the tool at all (e.g. GraphQuery needs a local graph)."""
        return True

    async def describe(self, backends: Backends, scope: ToolScope | None = None) -> ToolSpec | None:
        """The spec the planner sees now; None when there is nothing to offer at the moment (e.g. no MCP
        server answers). Tools whose choices are found at run time override this, offering only the choices
        `scope` (a request's group and state) admits; the registry checks the tool's own access."""
        return self.spec if self.available(backends) else None

    @abstractmethod
    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        """Run one step. Transport failures raise (Temporal retries them); a result the tool itself judges
        bad comes back with success=False or a low score, for the workflow's retry ladder."""

    async def check(self, arguments: dict[str, str], backends: Backends) -> list[str]:
        """What is wrong with these arguments before anything runs (the planner repairs a plan with
        problems; `run` refuses them as a deterministic failure). None by default."""
        return []

    async def fix(self, arguments: dict[str, str], backends: Backends) -> dict[str, str] | None:
        """The arguments corrected where the correction is certain (no LLM involved; e.g. a relationship
        written against the schema's direction), or None. Applied to a plan's steps before they are
        checked, and to a step's arguments before it runs."""
        return None

    def adjust(self, arguments: dict[str, str], rung: Rung) -> dict[str, str] | None:
        """New arguments for a weak result without asking the LLM, or None to let the LLM propose them."""
        return None
