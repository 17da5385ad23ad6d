"""Graph RAG for KnowledgeQuery: the local one (find the question's entities in FalkorDB, read their
neighbourhood, answer from those facts only) and TrustGraph's graph-rag service, whose own trace is linked under
the step that asked it."""

from __future__ import annotations

from backends import RagAnswer
from backends.graph_store import PROPERTY_TEXT, GraphStore
from backends.llm import ChatModel
from backends.trustgraph import TrustGraphServices
from questions.neighbourhood import describe_node, entity_terms
from service.prompts import PromptTemplates

ENTITIES_PER_TERM = 3
NEIGHBOURS = 60
NOTHING_FOUND = "No entity named in the question was found in the graph."


class LocalGraphRag:
    def __init__(self, graph: GraphStore, llm: ChatModel, prompts: PromptTemplates) -> None:
        self.graph = graph
        self.llm = llm
        self.prompts = prompts

    async def answer(self, question: str, collection: str = "", parent_uri: str = "") -> RagAnswer:
        """From the local graph: no trace of its own to link under `parent_uri`."""
        ids: list[int] = []
        facts: list[str] = []
        for term in entity_terms(question):
            found = await self.graph.ro_query(
                f"MATCH (n) {PROPERTY_TEXT} WHERE toLower(text) CONTAINS toLower($term) "
                f"RETURN DISTINCT id(n), labels(n), properties(n) LIMIT {ENTITIES_PER_TERM}",
                {"term": term},
            )
            for node_id, labels, props in found.rows:
                if node_id not in ids:
                    ids.append(node_id)
                    facts.append(describe_node(labels, props))
        if not ids:
            return RagAnswer(answer="", output=NOTHING_FOUND, entities_found=0, facts="")
        around = await self.graph.ro_query(
            "MATCH (n)-[r]-(m) WHERE id(n) IN $ids "
            "RETURN labels(n), properties(n), type(r), startNode(r) = n, labels(m), properties(m) "
            f"LIMIT {NEIGHBOURS}",
            {"ids": ids},
        )
        for n_labels, n_props, rel, outgoing, m_labels, m_props in around.rows:
            arrow = f"-[:{rel}]->" if outgoing else f"<-[:{rel}]-"
            facts.append(f"{describe_node(n_labels, n_props, 2)} {arrow} {describe_node(m_labels, m_props)}")
        facts_text = "\n".join(facts)
        completion = await self.llm.chat(
            [
                {"role": "system", "content": self.prompts.render("knowledge_system")},
                {"role": "user", "content": self.prompts.render("knowledge_user", question=question, facts=facts_text)},
            ]
        )
        return RagAnswer(
            answer=completion.text,
            output=f"{completion.text}\n\nFacts used:\n{facts_text}",
            entities_found=len(ids),
            facts=facts_text,
        )


class TrustGraphRag:
    def __init__(self, services: TrustGraphServices) -> None:
        self.services = services

    async def answer(self, question: str, collection: str = "", parent_uri: str = "") -> RagAnswer:
        """Asked as TrustGraph's agent asks it: graph-rag links its trace under `parent_uri` (the step's result in
        the run's trace) and sends its entities back, which the run passes on to its caller."""
        rag = await self.services.graph_rag(question, collection, parent_uri)
        return RagAnswer(
            answer=rag.text, output=rag.text, sources=rag.sources, explained=rag.explained, explain=rag.explain
        )
