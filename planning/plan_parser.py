"""Turn LLM planner output into a validated ExecutionPlan, or a list of problems in plain words.

The JSON schema here is what the LLM is constrained to; the parser still checks everything,
because an OpenAI-compatible endpoint may ignore the constraint.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import ValidationError

from contracts.plan import ExecutionPlan, ExecutionStep
from contracts.run import AgentSettings
from contracts.tool_spec import ToolSpec

MAX_ARGUMENT_CHARS = 4000


class PlanParseError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def plan_json_schema(tools: dict[str, ToolSpec], max_steps: int) -> dict[str, Any]:
    """One `anyOf` branch per tool, so the grammar only admits each tool's own arguments."""
    branches = []
    for tool in tools.values():
        properties: dict[str, Any] = {a.name: {"type": "string"} for a in tool.arguments}
        if tool.choice_argument:
            properties[tool.choice_argument] = {"type": "string", "enum": sorted(tool.choices)}
        if tool.json_argument:
            properties[tool.json_argument] = {"type": "object"}
        branches.append(
            {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "function": {"type": "string", "enum": [tool.name]},
                    "arguments": {
                        "type": "object",
                        "properties": properties,
                        "required": sorted(tool.required_arguments()),
                    },
                    "dependencies": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["id", "function", "arguments", "dependencies"],
            }
        )
    return {
        "type": "object",
        "properties": {
            "steps": {"type": "array", "minItems": 1, "maxItems": max_steps, "items": {"anyOf": branches}},
        },
        "required": ["steps"],
    }


def parse_plan(text: str, *, plan_id: str, tools: dict[str, ToolSpec], settings: AgentSettings) -> ExecutionPlan:
    """Parse and validate; raise PlanParseError listing every problem found."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanParseError([f"the plan is not valid JSON ({exc.msg} at position {exc.pos})"]) from exc
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise PlanParseError(['the plan must be a JSON object with a "steps" list'])
    raw_steps = data["steps"]
    if not raw_steps:
        raise PlanParseError(["the plan has no steps"])
    if len(raw_steps) > settings.max_steps:
        raise PlanParseError(
            [
                f"the plan has {len(raw_steps)} steps; at most {settings.max_steps} are allowed "
                "(max_steps: ask a narrower question, or raise it in the request's plan settings)"
            ]
        )

    problems: list[str] = []
    steps: list[ExecutionStep] = []
    for index, raw in enumerate(raw_steps, start=1):
        if not isinstance(raw, dict):
            problems.append(f"step {index} is not an object")
            continue
        step_id = str(raw.get("id") or f"step-{index}")
        function = raw.get("function")
        tool = tools.get(function) if isinstance(function, str) else None
        if tool is None:
            problems.append(f"step {step_id} uses unknown tool {function!r}; known tools: {', '.join(tools)}")
            continue
        arguments = raw.get("arguments")
        if not isinstance(arguments, dict):
            problems.append(f"step {step_id} has no arguments object")
            continue
        arguments = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
        missing = tool.required_arguments() - {k for k, v in arguments.items() if v.strip()}
        unknown = set(arguments) - tool.argument_names()
        if missing:
            problems.append(f"step {step_id} ({tool.name}) is missing arguments: {', '.join(sorted(missing))}")
        if unknown:
            problems.append(f"step {step_id} ({tool.name}) has unknown arguments: {', '.join(sorted(unknown))}")
        problems += choice_problems(step_id, tool, arguments)
        too_long = [k for k, v in arguments.items() if len(v) > MAX_ARGUMENT_CHARS]
        if too_long:
            problems.append(f"step {step_id} argument {too_long[0]} exceeds {MAX_ARGUMENT_CHARS} characters")
        dependencies = raw.get("dependencies") or []
        if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
            problems.append(f"step {step_id} dependencies must be a list of step ids")
            dependencies = []
        try:
            steps.append(
                ExecutionStep(
                    id=step_id,
                    function=tool.name,
                    arguments={k: v for k, v in arguments.items() if k in tool.argument_names()},
                    dependencies=dependencies,
                    confidence_threshold=tool.threshold(
                        settings.tool_thresholds, settings.confidence_threshold, settings.action_confidence_threshold
                    ),
                    timeout_ms=settings.step_timeout_ms,
                )
            )
        except ValidationError as exc:
            problems.append(f"step {step_id}: {exc.errors()[0]['msg']}")
    if problems:
        raise PlanParseError(problems)
    try:
        return ExecutionPlan(id=plan_id, steps=steps)
    except ValidationError as exc:
        # The model validator's PlanValidationError arrives wrapped; unwrap its words.
        messages = [str(e.get("ctx", {}).get("error", e["msg"])) for e in exc.errors()]
        raise PlanParseError(messages) from exc


def choice_problems(step_id: str, tool: ToolSpec, arguments: dict[str, str]) -> list[str]:
    """For tools with named sub-tools: the name must exist, and MCP arguments must fit its input schema."""
    if not tool.choice_argument or tool.choice_argument not in arguments:
        return []
    choice = arguments[tool.choice_argument]
    if choice not in tool.choices:
        return [
            f"step {step_id} ({tool.name}) names unknown {tool.choice_argument} {choice!r}; "
            f"known: {', '.join(sorted(tool.choices)) or 'none'}"
        ]
    if not tool.json_argument:
        return []
    where = f"step {step_id} ({tool.name} {choice}) {tool.json_argument}"
    try:
        given = json.loads(arguments.get(tool.json_argument) or "{}")
    except json.JSONDecodeError:
        given = None
    if not isinstance(given, dict):
        return [f"{where} are not a JSON object"]
    errors = sorted(Draft202012Validator(tool.choices[choice]).iter_errors(given), key=lambda e: e.path)
    return [f"{where}: {e.message}" for e in errors[:3]]


def describe_plan(plan: ExecutionPlan) -> str:
    """One line per step, for the planning observation message."""
    lines = []
    for n, step in enumerate(plan.steps, start=1):
        after = f" after {', '.join(step.dependencies)}" if step.dependencies else ""
        args = "; ".join(f"{k}={v}" for k, v in step.arguments.items())
        lines.append(f"{n}. {step.id}: {step.function}({args}){after} [threshold {step.confidence_threshold:.2f}]")
    return "\n".join(lines)
