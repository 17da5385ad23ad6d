"""The query path's activity payloads: planning, one tool step, the repair of a weak step, synthesis."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from contracts.llm_usage import LlmUsage
from contracts.plan import ConfidenceMetrics, ExecutionPlan, ExecutionStep
from contracts.run import AgentSettings, RequestScope
from contracts.wire import AgentResponse


class PlanningInput(BaseModel):
    question: str
    plan_id: str
    settings: AgentSettings
    scope: RequestScope = Field(default_factory=RequestScope)  # the request's group, state, framing, ...


class EntityMatch(BaseModel):
    """A name from the question as the graph stores it."""

    mention: str
    label: str
    property: str
    value: str
    # equal ignoring case; stored value contains it; by its words; the name an adjective is formed from
    # ("African": Africa)
    how: Literal["exact", "contains", "words", "formed"]

    def same_name(self) -> bool:
        """Found as the name itself: equal, containing it, or (by words) a stored name the question's
        longer wording contains ("Acme Industrial" for "Acme Industrial Ltd"). A stored name that only
        shares a word ("Soylent Industrial" for "Soylent Materials") is another thing's."""
        return self.how != "words" or self.value.strip().lower() in self.mention.lower()


class Grounding(BaseModel):
    """The names a question mentions, found in the graph before a query is written (or not found at all)."""

    matches: list[EntityMatch] = Field(default_factory=list)
    unmatched: list[str] = Field(default_factory=list)  # nothing in the graph holds them, not even in part
    # What the graph stores about the entities found by their own name (properties, relationships with
    # counts and examples), rendered for the planner: it shows which property or path holds the answer.
    facts: list[str] = Field(default_factory=list)

    def only_by_words(self) -> list[str]:
        """Names no stored value equals or contains: only other names sharing a word with them were found
        ("Ambervale Logistics" when only "Nordic Logistics" exists)."""
        named = {m.mention for m in self.matches if m.same_name()}
        return list(dict.fromkeys(m.mention for m in self.matches if m.mention not in named))

    def described_entities(self, limit: int, alike: bool = False) -> list[EntityMatch]:
        """The entities worth describing: one per name, found as the name itself and unambiguously (an exact
        match, or the only stored value containing the name), a name-like property preferred over another
        that happens to hold the same text; with `alike` (the question sets two names against each other), of
        a name several kinds hold, the kind another name is ("does Texas have more counties than Georgia":
        both states, not Georgia the country); at most `limit`, in the question's order."""
        usable: dict[str, list[EntityMatch]] = {}
        for mention in dict.fromkeys(m.mention for m in self.matches):
            found = [m for m in self.matches if m.mention == mention and m.same_name()]
            kept = [m for m in found if m.how in ("exact", "formed")] or (found if len(found) == 1 else [])
            if kept:
                usable[mention] = kept
        chosen: list[EntityMatch] = []
        for mention, kept in usable.items():
            others = {m.label for other, found in usable.items() if other != mention for m in found} if alike else set()
            chosen.append(
                min(
                    kept,
                    key=lambda m: (m.label not in others, not m.property.lower().endswith(("name", "title"))),
                )
            )
        return chosen[:limit]


class PlanningOutput(BaseModel):
    plan: ExecutionPlan | None = None
    error: str | None = None
    attempts: int = 1
    grounding: Grounding = Field(default_factory=Grounding)
    note: str = ""  # said to the caller before the plan: e.g. that it is the plan of last resort
    # How sure the model was of the plan's queries (confidence/token_evidence.py); empty without logprobs.
    token_evidence: dict[str, float] = Field(default_factory=dict)
    # How clearly code's program led the next, for a plan code proposed (confidence/evidence.py program_evidence).
    program_evidence: dict[str, float] = Field(default_factory=dict)
    # The question's words nothing in the schema, its names or its figures explains (questions/linking.py).
    unexplained: list[str] = Field(default_factory=list)
    # ... and those linked to parts of the schema the program does not use (questions/unused_links.py).
    unused: list[str] = Field(default_factory=list)
    # Why the plan has no token evidence though it was asked for (the server gave none); said and audited.
    evidence_note: str = ""
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)  # filled by the worker (contracts/llm_usage.py)
    # The explain messages of the services the tool called (graph-rag's trace, linked under `explain_parent`), which
    # the run passes on to its caller, as TrustGraph's agent forwards them; the service keeps them in its own store.
    explain: list[AgentResponse] = Field(default_factory=list)


class StepInput(BaseModel):
    question: str
    step: ExecutionStep
    # The run's workflow id: with the step and the entity, an action's idempotency key.
    workflow_id: str = ""
    # Outputs of the step's dependencies only, keyed by step id (the memory manager's selection).
    context: dict[str, str] = Field(default_factory=dict)
    retry_count: int = 0
    # The retry ladder's approach for this attempt (confidence/ladder.py; "human": a person asked for the
    # retry); "" for a first attempt. Metrics only.
    rung: str = ""
    # A human approved calling the tool with exactly these arguments (a tool that changes things is otherwise
    # not called: its output says it needs approval).
    approved: bool = False
    # The request's collection ("": the worker's configured one): part of a cached result's key. Graph-RAG
    # searches its tool entry's collection (tools/knowledge_query.py).
    collection: str = ""
    # The step's result in the run's trace (`urn:trustgraph:agent:<session>/step/<n>`; "" when the run explains
    # nothing): a service the tool calls links its own trace under it, as TrustGraph's agent has graph-rag do
    # (`parent_uri`).
    explain_parent: str = ""


class StepOutput(BaseModel):
    success: bool
    output: str
    confidence: ConfidenceMetrics
    execution_time_ms: int = 0
    error: str | None = None
    # The same arguments would fail the same way (a syntax error, an unknown name, bad arguments): the
    # retry ladder repairs them instead of repeating them.
    deterministic: bool = False
    # Not called: why a human must approve the call first (an MCP tool its server does not mark read-only).
    needs_approval: str = ""
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)  # filled by the worker (contracts/llm_usage.py)
    # The explain messages of the services the tool called (graph-rag's trace, linked under `explain_parent`), which
    # the run passes on to its caller, as TrustGraph's agent forwards them; the service keeps them in its own store.
    explain: list[AgentResponse] = Field(default_factory=list)


class SupportingResult(BaseModel):
    step_id: str
    function: str
    output: str
    score: float
    # What the step measured (ConfidenceMetrics), for the figures the answer's confidence line states ("the
    # query returned 12 rows").
    signals: dict[str, float] = Field(default_factory=dict)
    names: dict[str, list[str]] = Field(default_factory=dict)
    retry_count: int = 0


class AnswerStream(BaseModel):
    """Where the synthesis activity publishes the answer's sentences as they pass their checks (a request with
    `streaming: true`): the caller's topic and request id, the answer entity's message_id, and the run's
    prefix for their delivery ids (`<prefix>#answer.<n>`, the n-th sentence: the same when sent again)."""

    topic: str
    request_id: str
    message_id: str
    delivery_prefix: str
    collection: str = "default"


class SynthesisInput(BaseModel):
    question: str
    results: list[SupportingResult]
    max_context_size: int = 8192
    # The answer's evidence features but its verification (confidence/evidence.py), for the calibrator.
    evidence: dict[str, float] = Field(default_factory=dict)
    # What the graph stores about the entities the question names (Grounding.facts, read before planning):
    # a figure a query missed ("how many people live in X" planned as a count) is still in front of the
    # answer's writer, and an answer that quotes it is checked against it like a step result.
    facts: list[str] = Field(default_factory=list)
    # The run's evidence score: where the calibrator must extrapolate, the answer is stated no higher.
    evidence_score: float | None = Field(default=None, ge=0.0, le=1.0)
    # Set: publish the answer's sentences as they are written and pass their checks; None: not streamed.
    stream: AnswerStream | None = None
    # The question's words the reading could not place (PlanningOutput.unexplained): said with the confidence.
    unexplained: list[str] = Field(default_factory=list)
    # ... and those it placed in parts of the schema the query does not use (PlanningOutput.unused).
    unused: list[str] = Field(default_factory=list)


# How the answer was checked against the results: "verified" (every name and figure found in them),
# "rewritten" (the first draft stated something they lack), "composed" (made from the rows themselves,
# since no written answer could be verified), "absent" (every graph result was empty and named what the
# question asks about that exists nowhere: the answer says so, with no LLM call); "" for answers not
# checked (direct answers).
# "ranked" (a superlative's answer named another row than the query ranked first: it is read from the
# ranking), "restated" (the written answer lacked the name or figure asked for: it is the rows themselves).
Verification = Literal[
    "", "verified", "rewritten", "composed", "absent", "unsupported", "declined", "catalogue", "ranked", "restated"
]


class SynthesisOutput(BaseModel):
    answer: str
    model: str | None = None
    in_tokens: int | None = None
    out_tokens: int | None = None
    verification: Verification = ""
    unsupported: list[str] = Field(default_factory=list)  # what the first draft stated that the results lack
    # The calibrated probability that the answer is right, and which evidence moved it; None when no
    # calibrator could be used (`confidence_reasons` then says why, and the run keeps its evidence score).
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    confidence_reasons: str = ""
    evidence: dict[str, float] = Field(default_factory=dict)  # the features the calibrator read
    # The evidence that moved the calibrated confidence most: feature -> "raised" or "lowered".
    evidence_effects: dict[str, str] = Field(default_factory=dict)
    # How sure the model was of the written answer's words (confidence/token_evidence.py); empty without them.
    token_evidence: dict[str, float] = Field(default_factory=dict)
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)  # filled by the worker (contracts/llm_usage.py)
    # The explain messages of the services the tool called (graph-rag's trace, linked under `explain_parent`), which
    # the run passes on to its caller, as TrustGraph's agent forwards them; the service keeps them in its own store.
    explain: list[AgentResponse] = Field(default_factory=list)
    # What the activity already published of `answer` (its start, streamed as written): the workflow sends the
    # rest. `corrected`: the whole-answer checks did not stand behind the released sentences, so `answer` is
    # them followed by the checked answer as an addition (activities/answer_release.py).
    released: str = ""
    # The sentences `released` was sent as, in order (the n-th with the delivery id `<prefix>#answer.<n>`).
    released_sentences: list[str] = Field(default_factory=list)
    corrected: bool = False


class AdjustInput(BaseModel):
    """Ask the LLM for new arguments for a step whose result was weak (retry ladder rungs 2 and 3)."""

    question: str
    step: ExecutionStep
    rung: str  # "adjusted" | "simplified"
    last_output: str
    reasoning: str


class AdjustOutput(BaseModel):
    arguments: dict[str, str]
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)  # filled by the worker (contracts/llm_usage.py)
    # The explain messages of the services the tool called (graph-rag's trace, linked under `explain_parent`), which
    # the run passes on to its caller, as TrustGraph's agent forwards them; the service keeps them in its own store.
    explain: list[AgentResponse] = Field(default_factory=list)
