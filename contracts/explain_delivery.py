"""How a run's explain entities travel: queued with the caller's other messages (an `ExplainMessage` carries its
entity), published in order by the `publish` local activity (an `OutboxBatch`, which answers with `Published`),
then kept, off the caller's path, by the `store_explain` activity (a `StoreBatch`). The publisher builds their
triples (contracts/explain.py): workflow code never does."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from contracts.explain import Explained, ExplainMode
from contracts.explain_documents import ExplainDocument
from contracts.wire import AgentResponse, EmitInput, Triple


class ExplainMessage(AgentResponse):
    """An `explain` message as the run queues it: its entity rides along (the outbox hands it to the publisher in
    `OutboxBatch.explained`), its triples are not built yet."""

    explained: Explained


class OutboxBatch(EmitInput):
    """A batch of the caller's messages, with the entity of each `explain` message among them by its
    delivery_id: inline, the publisher sends each with its core triples; otherwise it leaves it out."""

    explained: dict[str, Explained] = Field(default_factory=dict)


class Published(BaseModel):
    """What the `publish` activity tells the run: `explain`, the worker's setting; `store`, whether the batch's
    entities are to be kept (inline or store-only, on a response topic whose flow has a triples store)."""

    explain: ExplainMode = "inline"
    store: bool = False


class StoreBatch(BaseModel):
    """Entities to keep where TrustGraph keeps its agent's: the triples store of the flow answering on
    `response_topic` (under the request's `collection`) and its workspace's librarian; in the order the run
    explained them (the plan before its steps)."""

    response_topic: str
    collection: str
    entities: list[Explained]


@dataclass(frozen=True)
class StoredEntity:
    """An entity as the store activity hands it to the writer: its URI, all its triples, and the document behind
    it with the `tg:document` link to it, which the writer adds to the triples once the librarian confirmed it
    stored the document (as TrustGraph's agent links only what `save_document` stored)."""

    explain_id: str
    triples: list[Triple]
    document: ExplainDocument | None = None
    link: Triple | None = None

    def linked(self, confirmed: bool) -> list[Triple]:
        """Its triples, with the link to its document when the librarian confirmed it."""
        return [*self.triples, self.link] if confirmed and self.link is not None else self.triples
