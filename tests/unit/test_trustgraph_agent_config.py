"""TrustGraph's agent configuration as the worker reads it (backends/trustgraph_config.py parse_config): each tool
type offered or refused by name, a tool-service entry checked as TrustGraph 2.11.1's agent checks it, the
prompt templates a workspace holds other than TrustGraph's defaults, and the collection a knowledge-query step
asks about (tools/knowledge_query.py)."""

from __future__ import annotations

import json
from typing import Any

from structlog.testing import capture_logs

from backends.trustgraph_config import customised_templates, parse_config
from tools.knowledge_query import collection


def entries(**values: dict[str, Any]) -> dict[str, str]:
    return {key: json.dumps(value) for key, value in values.items()}


SERVICE = {
    "request-queue": "request:tg:joke",
    "response-queue": "response:tg:joke",
    "config-params": [{"name": "style", "required": True}, "language"],
}


def test_each_tool_type_is_offered_or_refused_by_name() -> None:
    tools = entries(
        kq={"type": "knowledge-query", "name": "kq", "collection": "research"},
        sq={"type": "structured-query", "name": "sq"},
        rows={"type": "row-embeddings-query", "name": "rows", "schema-name": "sales"},
        odd={"type": "graph-walk", "name": "odd"},
        joke={"type": "tool-service", "name": "joke", "service": "jokes", "style": "dry"},
    )
    with capture_logs() as logs:
        config = parse_config({"tool": tools, "tool-service": entries(jokes=SERVICE)}, 3)
    assert sorted(config.tools) == ["joke", "kq"]
    assert sorted(config.refused) == ["odd", "rows", "sq"]
    refusals = {e["tool"]: e for e in logs if e["event"] == "trustgraph_tool_refused"}
    assert sorted(refusals) == ["odd", "rows", "sq"] and {e["log_level"] for e in refusals.values()} == {"error"}
    target = config.tools["joke"].service
    assert target is not None and (target.request_topic, target.response_topic, target.config) == (
        "non-persistent://tg/request/joke",
        "non-persistent://tg/response/joke",
        {"style": "dry"},
    )


def test_a_tool_service_entry_is_checked_as_trustgraph_checks_it() -> None:
    tools = entries(
        unnamed={"type": "tool-service", "name": "unnamed"},
        unknown={"type": "tool-service", "name": "unknown", "service": "nowhere"},
        missing={"type": "tool-service", "name": "missing", "service": "jokes"},
        no_queue={"type": "tool-service", "name": "no_queue", "service": "half"},
    )
    services = entries(jokes=SERVICE, half={"request-queue": "request:tg:half"})
    with capture_logs() as logs:
        config = parse_config({"tool": tools, "tool-service": services}, 1)
    assert config.tools == {} and config.refused == {}
    said = " ".join(e["error"] for e in logs if e["event"] == "trustgraph_tool_left_out")
    assert "no 'service' reference" in said and "unknown tool-service 'nowhere'" in said
    assert "missing required config param 'style'" in said and "must define 'request-queue'" in said


def test_a_template_is_the_operators_own_when_it_differs_from_the_default_or_has_none() -> None:
    defaults = entries(
        **{
            "template.plan-create": {"prompt": "Plan {{question}}"},
            "template.plan-synthesise": {"prompt": "Answer {{question}}"},
        }
    )
    workspace = entries(
        **{
            "template.plan-create": {"prompt": "Plan {{question}}"},
            "template.plan-synthesise": {"prompt": "Answer briefly {{question}}"},
            "template.agent-react": {"prompt": "Think"},
            "template.question": {"prompt": "Not the agent's"},
        }
    )
    assert customised_templates(workspace, defaults) == {"plan-synthesise", "agent-react"}
    assert customised_templates(defaults, defaults) == frozenset()
    assert parse_config({"prompt": workspace}, 1, defaults).customised_prompts == {"plan-synthesise", "agent-react"}


def test_a_knowledge_query_asks_about_its_entrys_collection_never_the_requests() -> None:
    tools = parse_config(
        {
            "tool": entries(
                research={"type": "knowledge-query", "name": "research", "collection": "papers"},
                anything={"type": "knowledge-query", "name": "anything"},
            )
        },
        1,
    ).tools
    assert collection({"tool": "research"}, tools) == "papers"
    assert collection({"tool": "anything"}, tools) == "default"  # an entry naming none: TrustGraph's default
    assert collection({}, tools) == "default"  # several, none named: TrustGraph's default too
    assert collection({}, {"research": tools["research"]}) == "papers"  # one collection: named or not
    assert collection({}, {}) == ""  # no entry at all: the worker's trustgraph_collection
