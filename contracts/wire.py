"""TrustGraph's agent messages as they travel on Pulsar (2.11.1, plus the legacy fields a drop-in must
still read and write); docs/trustgraph-contract.md describes them. The codec is wire_codec.py."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from contracts.subagent import SubagentReturn


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="ignore")
    goal: str = ""
    tool_hint: str = ""
    depends_on: list[int] = Field(default_factory=list)
    status: str = ""
    result: str = ""


class AgentStep(BaseModel):
    model_config = ConfigDict(extra="ignore")
    thought: str = ""
    action: str = ""
    arguments: dict[str, str] = Field(default_factory=dict)
    observation: str = ""
    step_type: str = ""
    plan: list[PlanStep] = Field(default_factory=list)
    subagent_results: dict[str, str] = Field(default_factory=dict)


class AgentRequest(BaseModel):
    """TrustGraph AgentRequest. Unknown keys are ignored, missing keys take defaults (as TrustGraph's
    own decoder does); `plan` is the legacy (<= 1.3) field that carries request-level config."""

    model_config = ConfigDict(extra="ignore")
    question: str
    state: str = ""
    group: list[str] | None = None
    history: list[AgentStep] = Field(default_factory=list)
    collection: str = "default"
    streaming: bool = False
    session_id: str = ""
    conversation_id: str = ""
    pattern: str = ""
    task_type: str = ""
    framing: str = ""
    correlation_id: str = ""
    parent_session_id: str = ""
    subagent_goal: str = ""
    expected_siblings: int = 0
    plan: str = ""
    # Who asks (TrustGraph 1.x's field, which its clients still send): whose request an approval would be
    # (the requester may not approve its own action) and, with identities configured, who must hold the
    # role 'act' to start one. Claimed by the caller, not proven: docs/security.md, "Closed by default".
    user: str = ""

    @field_validator(
        "state",
        "user",
        "collection",
        "session_id",
        "conversation_id",
        "pattern",
        "task_type",
        "framing",
        "correlation_id",
        "parent_session_id",
        "subagent_goal",
        "plan",
        mode="before",
    )
    @classmethod
    def _null_is_empty(cls, value: object) -> object:
        # TrustGraph writes None as null; its dataclass defaults make that an empty string.
        return "" if value is None else value

    @field_validator("history", mode="before")
    @classmethod
    def _null_history(cls, value: object) -> object:
        return [] if value is None else value


class ErrorInfo(BaseModel):
    type: str
    message: str


MessageType = Literal["thought", "action", "observation", "answer", "explain", "error"]


class Term(BaseModel):
    """An RDF term as TrustGraph's `Term` dataclass travels on Pulsar (every field written): `type` is "i"
    (IRI, in `iri`) or "l" (literal, in `value`, with an optional `datatype`)."""

    type: Literal["i", "b", "l", "t"]
    iri: str = ""
    id: str = ""
    value: str = ""
    datatype: str = ""
    language: str = ""
    triple: None = None  # quoted triples are never sent


class Triple(BaseModel):
    """TrustGraph's `Triple` (a quad: `g` names the graph), as it travels on Pulsar."""

    s: Term
    p: Term
    o: Term
    g: str | None = None


class AgentResponse(BaseModel):
    message_type: MessageType
    content: str = ""
    end_of_message: bool = True
    end_of_dialog: bool = False
    explain_id: str | None = None
    explain_graph: str | None = None
    explain_triples: list[Triple] = Field(default_factory=list)  # with message_type "explain" (contracts/explain.py)
    # One per entity (a thought, an observation, the answer), shared by all of its chunks, as TrustGraph's.
    message_id: str = ""
    # Not in the JSON: the Pulsar property `delivery_id`, one per message and the same when it is sent again,
    # which is what a client drops repeats by (docs/trustgraph-contract.md, "Ordering and delivery").
    delivery_id: str = ""
    error: ErrorInfo | None = None
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None


class EmitInput(BaseModel):
    """Messages for one caller, published in order."""

    topic: str
    request_id: str
    responses: list[AgentResponse]
    collection: str = "default"  # the request's: where its explain triples are stored
    # A sub-goal of TrustGraph's supervisor: the message that ends the dialog goes to the supervisor's
    # aggregator as a completion (contracts/subagent.py), not to the caller.
    subagent: SubagentReturn | None = None
    # The start of the answer already published by the synthesis activity (streamed as written): the answer's
    # chunks in `responses` are what follows it.
    released_answer: str = ""
