"""What tools and activities run against, chosen once per worker by `make_backends` (backends/factory.py):
the local servers (an OpenAI-compatible LLM, FalkorDB, MCP servers) or TrustGraph's services over Pulsar.

Tools see only the interfaces below, never which kind of backend is behind them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore
    from backends.llm import ChatModel
    from backends.mcp import McpCallResult, McpToolInfo
    from backends.schema_check import SchemaCheck
    from backends.trustgraph_config import TrustGraphConfig
    from contracts.tool_spec import ToolAccess
    from contracts.wire import AgentResponse
    from service.prompts import PromptTemplates


@dataclass(frozen=True)
class RagAnswer:
    """A graph-RAG answer and the evidence behind it, as far as the backend can tell."""

    answer: str  # the answer itself
    output: str  # what the step reports (the answer, plus the facts it used when there are any)
    entities_found: int | None = None  # entities of the question found in the graph; None: not reported
    facts: str | None = None  # the facts the answer was written from; None: not available to check
    sources: int = 0  # source documents the service reported
    explained: bool = False  # the service sent provenance
    explain: list[AgentResponse] = field(default_factory=list)  # its provenance (explain) messages, as it sent them


class GraphRag(Protocol):
    async def answer(self, question: str, collection: str = "", parent_uri: str = "") -> RagAnswer:
        """`collection`: the request's (TrustGraph's graph-RAG); "": the configured one. The local graph has none.
        `parent_uri`: the entity of the caller's trace the service's own trace is linked under."""
        ...


class TemplateService(Protocol):
    """The named prompt templates of the Prompt tool."""

    def templates(self) -> dict[str, str]:
        """name -> one-line description"""
        ...

    async def apply(self, name: str, input_text: str, context: str) -> str: ...

    def access(self, name: str) -> ToolAccess:
        """Which requests (groups, states) the template is offered to."""
        ...


class McpGateway(Protocol):
    async def list_tools(self) -> dict[str, McpToolInfo]: ...

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float) -> McpCallResult: ...


@dataclass
class Backends:
    llm: ChatModel
    prompts: PromptTemplates  # the service's own prompt texts (planner, synthesis, tools)
    templates: TemplateService
    rag: GraphRag
    graph: GraphStore | None = None  # the local FalkorDB graph; None when the graph is TrustGraph's
    ontology: Ontology | None = None  # the domain's classes and actions, when one is configured
    mcp: McpGateway | None = None
    schema: SchemaCheck | None = None  # checks queries against the local graph's live schema
    max_rows: int = 200  # rows a graph query keeps
    graph_candidates: int = 1  # queries per graph step compared for agreement (tools/query_candidates.py)
    form_when_doubted: bool = True  # a doubted step's query is cross-checked with the query form all the same
    graph_programs: bool = True  # a graph question's query is the best program code proposes (planning)
    link_judge: bool = False  # the model judges the words the sentence vectors leave open (tools/link_judge.py)
    closers: list[Any] = field(default_factory=list)  # objects with `aclose()` to call on shutdown
    # TrustGraph's config service (TrustGraph mode): its tools, the agent's additional context, task types.
    trustgraph_config: TrustGraphConfig | None = None

    async def start(self) -> None:
        """What must listen before the worker serves: TrustGraph's config pushes."""
        if self.trustgraph_config is not None:
            await self.trustgraph_config.start()

    async def aclose(self) -> None:
        for closer in self.closers:
            await closer.aclose()
