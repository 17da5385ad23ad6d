"""Planner output parsing: good plans get configured thresholds; bad ones get every problem named."""

from __future__ import annotations

import json

import pytest

from contracts.run import AgentSettings
from planning.plan_parser import PlanParseError, parse_plan, plan_json_schema
from tools.registry import static_catalogue

SETTINGS = AgentSettings(step_timeout_ms=12000, max_steps=3)

BUILTIN_TOOLS = static_catalogue(["GraphQuery", "TextCompletion", "KnowledgeQuery"])


def parse(steps: object) -> object:
    return parse_plan(json.dumps({"steps": steps}), plan_id="p1", tools=BUILTIN_TOOLS, settings=SETTINGS)


def test_thresholds_and_timeouts_come_from_configuration_by_tool() -> None:
    plan = parse(
        [
            {"id": "s1", "function": "GraphQuery", "arguments": {"query": "MATCH (n) RETURN n"}, "dependencies": []},
            {"id": "s2", "function": "TextCompletion", "arguments": {"prompt": "why"}, "dependencies": ["s1"]},
        ]
    )
    assert [(s.confidence_threshold, s.timeout_ms) for s in plan.steps] == [(0.8, 12000), (0.7, 12000)]
    assert plan.id == "p1"


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        ([{"id": "s1", "function": "Teleport", "arguments": {}, "dependencies": []}], "unknown tool 'Teleport'"),
        ([{"id": "s1", "function": "GraphQuery", "arguments": {}, "dependencies": []}], "missing arguments: query"),
        (
            [{"id": "s1", "function": "GraphQuery", "arguments": {"query": "x", "sql": "y"}, "dependencies": []}],
            "unknown arguments: sql",
        ),
        (
            [
                {"id": "s1", "function": "GraphQuery", "arguments": {"query": "x"}, "dependencies": ["s2"]},
                {"id": "s2", "function": "GraphQuery", "arguments": {"query": "x"}, "dependencies": ["s1"]},
            ],
            "dependency cycle",
        ),
        (
            [{"id": "s1", "function": "GraphQuery", "arguments": {"query": "x"}, "dependencies": ["nope"]}],
            "unknown steps: nope",
        ),
        (
            [
                {"id": f"s{i}", "function": "GraphQuery", "arguments": {"query": "x"}, "dependencies": []}
                for i in range(4)
            ],
            r"at most 3 are allowed \(max_steps: ask a narrower question",
        ),
        ([], "no steps"),
    ],
)
def test_bad_plans_name_the_problem(steps: object, problem: str) -> None:
    with pytest.raises(PlanParseError, match=problem):
        parse(steps)


def test_prose_instead_of_json_is_a_parse_problem() -> None:
    with pytest.raises(PlanParseError, match="not valid JSON"):
        parse_plan("Sure! Here is the plan: ...", plan_id="p", tools=BUILTIN_TOOLS, settings=SETTINGS)


def test_schema_limits_steps_and_offers_only_known_tools() -> None:
    schema = plan_json_schema(BUILTIN_TOOLS, 3)
    steps = schema["properties"]["steps"]
    assert steps["maxItems"] == 3
    assert sorted(b["properties"]["function"]["enum"][0] for b in steps["items"]["anyOf"]) == [
        "GraphQuery",
        "KnowledgeQuery",
        "TextCompletion",
    ]
