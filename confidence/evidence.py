"""The evidence behind an answer, as numbers: what the calibrator (confidence/calibrator.py) maps to
the probability that the answer is right. Every feature says how the answer was reached (the steps that
support it, the rows, names found or not, retries, how the written answer checked out), never what it is
about: nothing here knows a domain, a graph or a wording. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Sequence

from contracts.plan import ConfidenceMetrics

# name -> what it means when it moves the score (the words the answer's confidence line uses)
FEATURES: dict[str, str] = {
    "step_score": "the supporting steps' own scores",
    "coverage": "the share of planned steps with a usable result",
    "graph_rows": "rows from the knowledge graph",
    "empty_result": "an empty graph result",
    "absent_name": "a name in the question that exists nowhere in the graph",
    "unmatched_value": "a value the query matched on that exists nowhere in the graph",
    "row_count": "the number of rows returned",
    "truncated": "more rows than were kept",
    "text_only": "an answer from generated text, not graph rows",
    "ungrounded_text": "generated text not found in its evidence",
    "refusal": "a tool that said it does not know",
    "retries": "the retries the steps needed",
    "disagreement": "candidate queries that returned different answers",
    "form_disagrees": "a query form whose answer is not the one given",
    "rewritten": "a rewritten answer (the first stated what the results lack)",
    "composed": "an answer composed from the rows (no written one checked out)",
    "declined": "an answer saying the results lack what was asked, though rows came back",
    "reranked": "a written answer that named another row than the query ranked first, or misstated the figures of "
    "the rows it ranked first (replaced by the ranking)",
    "ranked_first": "an answer naming the first of the rows the query ranked",
    # 1 only when it happened (the calibrator was fitted without it and reads none of it)
    "streamed_correction": "an answer whose first sentences were sent as the model wrote them, then corrected "
    "by an addition",
    "inadequate": "an answer without the kind of thing asked for (a name for 'which', a figure for 'how many')",
    "partial_list": "a list answer that names some of the rows the query returned and leaves others out",
    "unused_name": "a query that ignores a name the question gives and the graph holds",
    "unused_figure": 'a query that leaves out a figure the question gives ("a population above 5000")',
    "unasked_label": "a query that never matches the kind of thing the question asks for",
    "short_walk": "a query that walks the question's relationships fewer times than it names them, matches no "
    "kind of thing the question names, returns or ranks by only the things it names, walks from "
    "two of them apart, or joins two of them by fewer relationships than separate them",
    "multi_step": "a plan of several steps",
    "aggregates": "a query that aggregates (count, sum, average, min, max)",
    "hops": "the relationships a query walks",
    # only where code proposed the plan's query (activities/planning.py, graph_programs)
    "program_margin": "how far the program code chose ranked above the next one",
    "rivals_disagree": "the share of the programs ranked nearly as high whose answer differs from the chosen one's",
    # ... and the question's words that nothing in the schema, its names or its figures explains (a count, up to
    # MAX_UNEXPLAINED_FEATURE): what the reading did not understand
    "unexplained_words": "words of the question that nothing in the graph's schema explains",
    # ... and those linked to a part of the schema the chosen program does not use (questions/unused_links.py)
    "unused_words": "words of the question the query does not use the meaning of",
    # from the model's token log-probabilities (confidence/token_evidence.py); absent when none were given
    "query_token_p": "how sure the model was of its query's words",
    "query_weakest_p": "the model's least sure word in its query",
    "answer_token_p": "how sure the model was of its answer's words",
    "answer_weakest_p": "the model's least sure word in its answer",
}
# Features a run may lack (the LLM server gave no log-probabilities; no candidate queries ran): the calibrator
# reads the typical value for them, never 0, which would read as a model that was sure of nothing or as
# candidates that all agreed.
MAY_BE_MISSING = frozenset(
    {
        "query_token_p",
        "query_weakest_p",
        "answer_token_p",
        "answer_weakest_p",
        "disagreement",
        "form_disagrees",
        "program_margin",
        "rivals_disagree",
        "unexplained_words",
        "unused_words",
    }
)
# Which way each piece of evidence may move the probability when fitted (confidence/calibrator.py fit): +1 only
# up, -1 only down. A fit on a few hundred runs otherwise gives a sign to a confound (naming the first ranked
# row came with the hard superlative questions, so it "lowered" them: the words then read backwards, and the
# weight does not carry to another graph). The ones not here describe the question's kind, not a flaw or a
# check passed (rows, hops, aggregation, a name not in the graph), and take the sign the runs give them.
DIRECTION: dict[str, int] = {
    **dict.fromkeys(
        (
            "step_score",
            "coverage",
            "ranked_first",
            "query_token_p",
            "query_weakest_p",
            "answer_token_p",
            "answer_weakest_p",
            "program_margin",
        ),
        1,
    ),
    **dict.fromkeys(
        (
            "truncated",
            "text_only",
            "ungrounded_text",
            "refusal",
            "retries",
            "disagreement",
            "form_disagrees",
            "rewritten",
            "composed",
            "declined",
            "reranked",
            "streamed_correction",
            "inadequate",
            "partial_list",
            "unused_name",
            "unused_figure",
            "unasked_label",
            "short_walk",
            "rivals_disagree",
            "unexplained_words",
            "unused_words",
        ),
        -1,
    ),
}
MAX_HOPS_FEATURE = 3  # hops are counted up to this many (a longer walk is as hard as a walk of three)
# A lead of this much evidence (cypher/programs.py's scale) or more over the next program is as clear as any.
MAX_PROGRAM_LEAD = 10
MAX_UNEXPLAINED_FEATURE = 3  # unexplained words counted up to this many


def program_evidence(
    scores: Sequence[int],
    rivals_disagree: float | None = None,
    unexplained: int | None = None,
    unused: int | None = None,
) -> dict[str, float]:
    """How clearly code's first program (`scores`: the best programs' evidence, best first) led the next: 1
    for a lead of MAX_PROGRAM_LEAD or more, or no other program; 0 for a tie. With `rivals_disagree`
    (tools/program_rivals.py), the share of close rivals whose answer differs; absent when they were not run.
    With `unexplained`, how many of the question's words the reading could not place (questions/linking.py);
    with `unused`, how many it placed in parts of the schema the program does not use."""
    if not scores:
        return {}
    lead = scores[0] - scores[1] if len(scores) > 1 else MAX_PROGRAM_LEAD
    evidence = {"program_margin": min(float(MAX_PROGRAM_LEAD), max(0.0, float(lead))) / MAX_PROGRAM_LEAD}
    if rivals_disagree is not None:
        evidence["rivals_disagree"] = rivals_disagree
    if unexplained is not None:
        evidence["unexplained_words"] = float(min(unexplained, MAX_UNEXPLAINED_FEATURE))
    if unused is not None:
        evidence["unused_words"] = float(min(unused, MAX_UNEXPLAINED_FEATURE))
    return evidence


def verification_features(verification: str) -> dict[str, float]:
    """How the written answer checked out against the results (SynthesisOutput.verification), as features."""
    return {
        "rewritten": float(verification == "rewritten"),
        "composed": float(verification in ("composed", "restated")),
        "declined": float(verification == "declined"),
        "reranked": float(verification == "ranked"),
    }


def run_evidence(usable: list[ConfidenceMetrics], planned_steps: int, verification: str = "") -> dict[str, float]:
    """The features of one answer: `usable` are the confidences of the steps whose results it was written
    from; `verification` how the written answer checked out against them (SynthesisOutput.verification)."""
    graph = [m.signals for m in usable if "rows" in m.signals]
    text = [m.signals for m in usable if "rows" not in m.signals]
    rows = sum(s["rows"] for s in graph)
    grounded = [s["grounded_share"] for s in text if "grounded_share" in s]
    return {
        "step_score": min((m.score for m in usable), default=0.0),
        "coverage": len(usable) / planned_steps if planned_steps > 0 else 0.0,
        "graph_rows": float(bool(graph)),
        "empty_result": float(bool(graph) and rows == 0),
        "absent_name": float(any(s.get("absent_names", 0) > 0 for s in graph)),
        "unmatched_value": float(any(s.get("unmatched_values", 0) > 0 for s in graph)),
        "row_count": min(1.0, math.log10(1 + rows) / 3),  # 0 rows -> 0, 999 rows or more -> 1
        "truncated": float(any(s.get("truncated", 0) > 0 for s in graph)),
        "text_only": float(bool(usable) and not graph),
        "ungrounded_text": 1.0 - min(grounded, default=1.0),
        "refusal": float(any(s.get("refusal", 0) > 0 for s in text)),
        "retries": min(3.0, float(sum(m.retry_count for m in usable))) / 3,
        # only where candidate queries ran (graph_candidates > 1): otherwise there is no agreement to measure
        **(
            {"disagreement": max(voted)}
            if (voted := [1.0 - s.get("agreement", 1.0) for s in graph if s.get("candidates", 1) > 1])
            else {}
        ),
        # only where the query form ran (tools/query_candidates.py)
        **(
            {"form_disagrees": max(formed)}
            if (formed := [1.0 - s["form_agrees"] for s in graph if "form_agrees" in s])
            else {}
        ),
        # every query of the answer, not one: a plan's steps may each walk part of the way to what was asked
        "unasked_label": float(bool(graph) and all(s.get("unasked", 0) > 0 for s in graph)),
        "unused_name": float(bool(graph) and all(s.get("unused_names", 0) > 0 for s in graph)),
        "unused_figure": float(bool(graph) and all(s.get("unused_figures", 0) > 0 for s in graph)),
        "short_walk": float(bool(graph) and all(s.get("short_walk", 0) > 0 for s in graph)),
        **verification_features(verification),
        # whether the answer states what was asked: known once it is written (activities/synthesis.py)
        "ranked_first": 0.0,
        "inadequate": 0.0,
        "partial_list": 0.0,
        "streamed_correction": 0.0,
        "multi_step": float(planned_steps > 1),
        "aggregates": float(any(s.get("aggregates", 0) > 0 for s in graph)),
        "hops": min(float(MAX_HOPS_FEATURE), max((s.get("hops", 0.0) for s in graph), default=0.0)) / MAX_HOPS_FEATURE,
    }
