"""What the planner is told about a tool: its name, what it does, its arguments, and how sure a result
of it must be. Pure data: the planner's prompt and the JSON schema its output is constrained to are
built from these."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class Criticality(StrEnum):
    READ = "read"  # reads or computes: its own threshold applies
    MUTATION = "mutation"  # changes the graph: never below the action threshold


DEFAULT_GROUP = "default"
ANY = "*"


class ToolAccess(BaseModel):
    """Which requests a tool is offered to, in the terms of TrustGraph's tool config: the `group`s it belongs
    to and the `applicable-states` it may be used in (2.11.1's defaults: the group "default", any state)."""

    groups: list[str] = Field(default_factory=lambda: [DEFAULT_GROUP])
    states: list[str] = Field(default_factory=lambda: [ANY])


class ToolScope(BaseModel):
    """A request's view of the tools: its `group` and `state` (TrustGraph's AgentRequest fields)."""

    groups: list[str] | None = None  # None: TrustGraph's default, the group "default"; "*" names every group
    state: str = ""  # "": TrustGraph's "undefined"

    def admits(self, access: ToolAccess) -> bool:
        """As TrustGraph 2.11.1's tool filter: one group in common (or "*" asked for), and the state applicable."""
        requested = self.groups if self.groups is not None else [DEFAULT_GROUP]
        state = self.state or "undefined"
        return (ANY in requested or bool(set(access.groups) & set(requested))) and (
            ANY in access.states or state in access.states
        )

    def said(self) -> str:
        groups = ", ".join(self.groups) if self.groups else "none" if self.groups is not None else DEFAULT_GROUP
        return f"group(s) {groups}" + (f" in state {self.state!r}" if self.state else "")


class ToolArgument(BaseModel):
    name: str
    description: str
    required: bool = True


class ToolSpec(BaseModel):
    name: str
    description: str
    arguments: list[ToolArgument] = Field(default_factory=list)
    # The confidence a result must reach; None: the run's default (`confidence_threshold`).
    default_threshold: float | None = None
    criticality: Criticality = Criticality.READ
    # Offered to the planner (and registered) unless the deployment's `tools` setting says otherwise. New
    # tools start off until a measurement shows they help (bench/, BENCHMARKS.md).
    offered_by_default: bool = False
    position: int = 100  # where the planner's list shows it: lower first (the small model favours the first)
    # The repair of a weak step shows the LLM the graph's schema (for tools whose arguments name its parts).
    uses_schema: bool = False
    # Results may be cached for `cache_ttl_seconds` (not for tools whose answer changes with the graph's state).
    cacheable: bool = True
    # A tool that dispatches to named sub-tools (McpTool: the MCP tools found at run time; Prompt: the
    # templates): the name -> JSON schema of its input. The `choice_argument` must name one of them, and the
    # `json_argument` (if any) is a JSON object checked against the chosen one's schema.
    choices: dict[str, dict[str, Any]] = Field(default_factory=dict)
    choice_argument: str = ""
    json_argument: str = ""
    # Which requests it is offered to (a request's `group` and `state`); a choice's own access, where the
    # choices come from TrustGraph's tool config, is in `choice_access` (absent: the tool's).
    access: ToolAccess = Field(default_factory=ToolAccess)
    choice_access: dict[str, ToolAccess] = Field(default_factory=dict)

    def required_arguments(self) -> set[str]:
        return {a.name for a in self.arguments if a.required}

    def argument_names(self) -> set[str]:
        return {a.name for a in self.arguments}

    def threshold(self, configured: dict[str, float], default: float, action_threshold: float) -> float:
        """Configured per tool, else the tool's own default, else the run's; a mutation never below actions'."""
        value = configured.get(self.name, self.default_threshold if self.default_threshold is not None else default)
        return max(value, action_threshold) if self.criticality is Criticality.MUTATION else value


def json_schema_summary(schema: dict[str, Any]) -> str:
    """`{name: type, optional?: type}`: an input schema in a few words, for the planner's prompt."""
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return "{" + ", ".join(f"{k}: {v.get('type', 'any')}{'' if k in required else '?'}" for k, v in props.items()) + "}"
