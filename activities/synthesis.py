"""Synthesis activities: the final answer, written only from the steps that support it and verified
against them (every name and figure it states must be in the results); and the router's direct answer."""

from __future__ import annotations

import structlog
from temporalio import activity

from actions.catalogue import CATALOGUE, about_actions, catalogue_answer
from activities.answer_release import Publish, Release, released_before, with_addition
from backends import Backends
from backends.grounding import vocabulary
from backends.llm import Completion, streamed
from backends.trustgraph_agent_prompts import PLAN_SYNTHESISE, agent_prompts
from confidence.answer_check import absence_answer, compose_from_rows, declines, unsupported_claims
from confidence.answer_fit import fit, ranking, refit, superlative
from confidence.calibrator import CalibratorError, capped
from confidence.evidence import verification_features
from confidence.evidence_words import Figures, StepFigures
from confidence.token_evidence import answer_evidence
from contracts.conversation import FollowUpInput
from contracts.names import Activities
from contracts.query_path import SynthesisInput, SynthesisOutput, Verification
from contracts.redaction import may_hold_secret
from contracts.routing import RouteInput
from planning.step_context import trim
from service.calibrator_file import CalibratorFile

log = structlog.get_logger(__name__)
# Answers stated as the model wrote them (not composed or restated from the rows).
WRITTEN_AS_STATED = frozenset({"verified", "rewritten", "declined"})


def fitted(question: str, synthesis: SynthesisOutput, outputs: list[str]) -> SynthesisOutput:
    """The written answer, or the one the rows give when it does not state what was asked (a superlative
    answered with another row than the query ranked first; a "which" naming nothing, a "how many" no figure)."""
    if synthesis.verification in ("absent", "declined"):
        return synthesis
    replaced = refit(question, synthesis.answer, outputs)
    if replaced is None:
        return synthesis
    how, answer = replaced
    log.warning("answer_not_what_was_asked", how=how, draft=synthesis.answer[:200])
    return synthesis.model_copy(update={"answer": answer, "verification": how})


def plan_steps(request: SynthesisInput, share: int, facts: str) -> list[dict[str, object]]:
    """The step results as TrustGraph's `plan-synthesise` template receives them (`index`, `goal`, `result`). A
    step here has no goal of its own: its tool and id stand for it; the question's facts come last, as a step."""
    steps: list[dict[str, object]] = [
        {"index": n, "goal": f"{r.function} ({r.step_id})", "result": trim(r.output, share)}
        for n, r in enumerate(request.results)
    ]
    if facts:
        steps.append(
            {"index": len(steps), "goal": "what the graph stores about the names in the question", "result": facts}
        )
    return steps


def figures(request: SynthesisInput) -> Figures:
    """What the supporting steps measured, for the figures the confidence line states."""
    ranked = ranking([r.output for r in request.results]) if superlative(request.question) else None
    return Figures(
        steps=[StepFigures(signals=r.signals, names=r.names, retries=r.retry_count) for r in request.results],
        ranked_rows=len(ranked.rows) if ranked else 0,
        unexplained=list(request.unexplained),
        unused=list(request.unused),
    )


def calibrated(
    synthesis: SynthesisOutput,
    evidence: dict[str, float],
    calibrator_file: CalibratorFile,
    answer_fit: dict[str, float] | None = None,
    measured: Figures | None = None,
    evidence_score: float | None = None,
) -> SynthesisOutput:
    """The probability that the answer is right, from its evidence, how the written answer checked out and
    whether it states what was asked (`answer_fit`: confidence/answer_fit.Fit.features), said with what the
    run `measured`. An unusable calibrator file is said in `confidence_reasons` (and logged); the evidence
    score stands."""
    if not evidence:  # a caller that sends no evidence (an older workflow) keeps its own score
        return synthesis
    # The model's sureness of its words is evidence only for an answer stated as it wrote it.
    written = synthesis.token_evidence if synthesis.verification in WRITTEN_AS_STATED else {}
    features = {**evidence, **verification_features(synthesis.verification), **(answer_fit or {}), **written}
    effects: dict[str, str] = {}
    try:
        calibrator = calibrator_file.current()
        probability, reasons = calibrator.state(features, measured, evidence_score)
        effects = calibrator.effects(features) if probability is not None else {}
    except CalibratorError as exc:
        log.error("calibrator_unusable", error=str(exc))
        probability, reasons = capped(None, f"not calibrated ({exc}); the evidence score stands", features, measured)
    return synthesis.model_copy(
        update={
            "evidence": features,
            "confidence": probability,
            "confidence_reasons": reasons,
            "evidence_effects": effects,
        }
    )


class SynthesisActivities:
    def __init__(
        self, backends: Backends, calibrator: CalibratorFile | None = None, publish: Publish | None = None
    ) -> None:
        """`publish`: how a streamed answer's sentences reach the caller (activities/publish.py, the same code
        the workflow's messages leave through); without it, no answer is streamed as written."""
        self.backends = backends
        self.calibrator = calibrator or CalibratorFile()
        self.llm = backends.llm
        self.prompts = backends.prompts
        self.publish = publish

    async def _vocabulary(self) -> set[str]:
        """The schema's words may appear in an answer without being in the rows ("suppliers", "orders")."""
        graph = self.backends.graph
        return await vocabulary(graph) if graph is not None else set()

    @activity.defn(name=Activities.SYNTHESIZE)
    async def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        outputs = [r.output for r in request.results]
        release = self._release(request)
        written = fitted(request.question, await self._written(request, release), outputs)
        # An answer saying the thing does not exist states no figure or name, and needs none.
        absent = written.verification == "absent"
        answer_fit = {} if absent else fit(request.question, written.answer, outputs).features()
        if release is not None and release.sentences:
            # The caller has read the released sentences: what follows them may only add to them.
            answer, corrected = with_addition(release.text, written.answer, written.verification)
            if corrected:
                log.warning("streamed_answer_corrected", how=written.verification, released=release.text[:200])
                answer_fit["streamed_correction"] = 1.0
            written = written.model_copy(
                update={
                    "answer": answer,
                    "released": release.text,
                    "released_sentences": list(release.sentences),
                    "corrected": corrected,
                }
            )
        return calibrated(
            written, request.evidence, self.calibrator, answer_fit, figures(request), request.evidence_score
        )

    def _release(self, request: SynthesisInput) -> Release | None:
        """The release of this attempt, when the request streams as written (with what earlier attempts
        released, from the heartbeat)."""
        # A model that cannot stream (TrustGraph's text-completion) writes the answer whole: it is sent once
        # checked, as when the request does not stream as written.
        if request.stream is None or self.publish is None or not getattr(self.llm, "streams", False):
            return None
        return Release(request.stream, self.publish, released_before())

    async def _written(self, request: SynthesisInput, release: Release | None = None) -> SynthesisOutput:
        outputs = [r.output for r in request.results]
        absent = absence_answer(outputs)
        if absent is not None:
            return SynthesisOutput(answer=absent, verification="absent")
        share = request.max_context_size // max(1, len(request.results) + bool(request.facts))
        blocks = [
            f"[{r.step_id} {r.function}, confidence {r.score:.2f}]\n{trim(r.output, share)}" for r in request.results
        ]
        facts = trim("\n".join(request.facts), share) if request.facts else ""
        if facts:
            blocks.append(f"[what the graph stores about the names in the question]\n{facts}")
        results = "\n\n".join(blocks) or "(no step produced a usable result)"
        messages = [
            {"role": "system", "content": self.prompts.render("synthesis_system")},
            {
                "role": "user",
                "content": self.prompts.render("synthesis_user", question=request.question, results=results),
            },
        ]
        evidence = "\n".join([request.question, *(r.output for r in request.results), facts])
        known = await self._vocabulary()
        prompts = agent_prompts(self.backends)
        if release is None and prompts is not None and prompts.uses(PLAN_SYNTHESISE):
            completion = await prompts.plan_synthesise(request.question, "", plan_steps(request, share, facts))
        elif release is None:
            completion = await self.llm.chat(messages, max_tokens=400, logprobs=True)
        else:
            # Each sentence is released once every name and figure in it is in the results and it holds nothing
            # a redaction would touch; the rest waits for the whole-answer checks below.
            release.passes = lambda sentence: (
                not may_hold_secret(sentence) and not unsupported_claims(sentence, evidence, known, outputs)
            )
            completion = await streamed(self.llm, messages, release.written, max_tokens=400, logprobs=True)
        draft = completion.text.strip()
        first = unsupported_claims(draft, evidence, known, outputs)
        if not first:
            return self._output(draft, completion, "declined" if declines(draft, outputs) else "verified", [])
        log.warning("answer_unsupported", claims=first)
        messages += [
            {"role": "assistant", "content": draft},
            {"role": "user", "content": self.prompts.render("synthesis_repair", claims=", ".join(first))},
        ]
        completion = await self.llm.chat(messages, max_tokens=400, logprobs=True)
        rewritten = completion.text.strip()
        if rewritten and not unsupported_claims(rewritten, evidence, known, outputs):
            return self._output(
                rewritten, completion, "declined" if declines(rewritten, outputs) else "rewritten", first
            )
        return self._output(compose_from_rows(request.question, outputs), completion, "composed", first)

    @staticmethod
    def _output(
        answer: str, completion: Completion, verification: Verification, unsupported: list[str]
    ) -> SynthesisOutput:
        return SynthesisOutput(
            answer=answer,
            model=completion.model,
            in_tokens=completion.in_tokens,
            out_tokens=completion.out_tokens,
            verification=verification,
            unsupported=unsupported,
            token_evidence=answer_evidence(completion.token_logprobs),
        )

    @activity.defn(name=Activities.ANSWER_DIRECTLY)
    async def answer_directly(self, request: RouteInput) -> SynthesisOutput:
        """The router's ANSWER intent: no tools, no graph. A question about the actions themselves is answered
        from their definitions (read, not written by the model)."""
        ontology = self.backends.ontology
        if ontology is not None and ontology.actions and about_actions(ontology, request.question):
            return SynthesisOutput(answer=catalogue_answer(ontology, request.question), verification=CATALOGUE)
        completion = await self.llm.chat(
            [
                {"role": "system", "content": self.prompts.render("direct_answer_system")},
                {"role": "user", "content": self.prompts.render("direct_answer_user", question=request.question)},
            ],
            max_tokens=400,
        )
        return SynthesisOutput(
            answer=completion.text.strip(),
            model=completion.model,
            in_tokens=completion.in_tokens,
            out_tokens=completion.out_tokens,
        )

    @activity.defn(name=Activities.ANSWER_FROM_CONVERSATION)
    async def answer_from_conversation(self, request: FollowUpInput) -> SynthesisOutput:
        """A follow-up the conversation already answers ("which of those failed, and why?"), checked against the
        conversation the way a graph answer is checked against its rows."""
        completion = await self.llm.chat(
            [
                {"role": "system", "content": self.prompts.render("conversation_answer_system")},
                {
                    "role": "user",
                    "content": self.prompts.render(
                        "conversation_answer_user", conversation=request.conversation, question=request.question
                    ),
                },
            ],
            max_tokens=400,
        )
        answer = completion.text.strip()
        evidence = f"{request.question}\n{request.conversation}"
        unsupported = unsupported_claims(answer, evidence, await self._vocabulary())
        return self._output(answer, completion, "verified" if not unsupported else "unsupported", unsupported)
