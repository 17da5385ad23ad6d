"""Call tools directly, as their activities would, on backends a test builds from real parts."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from actions.ontology import Ontology
from backends import Backends
from backends.graph_rag import LocalGraphRag
from backends.graph_store import GraphStore
from backends.llm import LLMClient
from backends.mcp import McpTools
from backends.schema_check import SchemaCheck
from backends.templates import LocalTemplates
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput, StepOutput
from service.prompts import PromptTemplates
from tools import registry

NOWHERE = "http://127.0.0.1:9/v1"  # nothing listens: a test that must not reach an LLM


def local_backends(
    llm_url: str = NOWHERE,
    falkordb_url: str = "redis://127.0.0.1:9",
    graph_name: str = "procurement",
    ontology: Ontology | None = None,
    mcp: McpTools | None = None,
    graph_programs: bool = False,
) -> Backends:
    """Backends as the worker makes them, on a graph and an LLM server of the test's. `graph_programs` off by
    default: a test that scripts the plan means that plan to run, not code's program."""
    prompts = PromptTemplates.load()
    llm = LLMClient(llm_url, "m")
    graph = GraphStore(falkordb_url, graph_name)
    return Backends(
        llm=llm,
        prompts=prompts,
        templates=LocalTemplates(prompts, llm),
        rag=LocalGraphRag(graph, llm, prompts),
        graph=graph,
        ontology=ontology,
        mcp=mcp,
        schema=SchemaCheck(graph),
        graph_programs=graph_programs,
        closers=[llm, graph],
    )


class ToolCalls:
    """`calls.search_instances(request)` runs the tool of that name on these backends."""

    def __init__(self, backends: Backends) -> None:
        self.backends = backends

    def __getattr__(self, name: str) -> Callable[[StepInput], Awaitable[StepOutput]]:
        tool = registry.tool(name)
        if tool is None:
            raise AttributeError(f"no tool named {name!r}")
        return lambda request: tool.run(request, self.backends)


def call(function: str, **arguments: Any) -> StepInput:
    """A one-step request for `function`, every argument as the string a plan carries."""
    return StepInput(
        question="q",
        step=ExecutionStep(id="s1", function=function, arguments={k: str(v) for k, v in arguments.items()}),
    )


def results(out: StepOutput) -> list[dict[str, Any]]:
    """The rows of an ontology tool's output."""
    return json.loads(out.output)["results"]
