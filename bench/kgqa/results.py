"""One JSON line per asked question, written as soon as it is judged so an interrupted run keeps what
finished; read back (and judged again with the current judge) by `--score`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from bench.kgqa.questions import Gold, Question
from bench.kgqa.scoring import is_correct, split_answer
from confidence.calibrator import Calibrator


@dataclass
class Result:
    id: str
    category: str
    split: str
    question: str
    gold: Gold
    answer: str
    confidence: float | None
    correct: bool
    seconds: float
    asked_human: bool
    error: str | None
    dataset: str = ""
    command: str = ""  # the run's command line, for the report of a later `--score`
    evidence: dict[str, float] | None = None  # the run's evidence features (confidence/evidence.py)
    evidence_score: float | None = None  # its confidence before calibration
    queries: list[str] | None = None  # the plan's queries (not judged: read to see why an answer went wrong)
    # How the answer reached the caller: arrived, recovered (from Temporal), lost (the run completed, the
    # answer never came) or slow (no answer in time); bench/kgqa/runner.Outcome.
    delivery: str = "arrived"
    twice: bool = False  # the run's closing answer reached the caller more than once

    @classmethod
    def judge(
        cls,
        q: Question,
        dataset: str,
        answer: str,
        seconds: float,
        asked_human: bool,
        error: str | None,
        command: str = "",
        evidence: dict[str, float] | None = None,
        evidence_score: float | None = None,
        queries: list[str] | None = None,
        delivery: str = "arrived",
        twice: bool = False,
    ) -> Result:
        """The final answer judged: its confidence from the "Confidence: 0.NN" line; an error is wrong."""
        _, confidence = split_answer(answer)
        return cls(
            id=q.id,
            category=q.category,
            split=q.split,
            question=q.text,
            gold=q.gold,
            answer=answer,
            confidence=confidence,
            correct=not error and is_correct(answer, q.gold),
            seconds=round(seconds, 2),
            asked_human=asked_human,
            error=error,
            dataset=dataset,
            command=command,
            evidence=evidence,
            evidence_score=evidence_score,
            queries=queries,
            delivery=delivery,
            twice=twice,
        )


def write(out: IO[str], result: Result) -> None:
    out.write(json.dumps(asdict(result), ensure_ascii=False) + "\n")
    out.flush()


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def kept_answers(path: Path) -> set[str]:
    """The ids of the questions `path` holds answers to (bench/kgqa.py --resume). A last line cut off mid-write
    (the run was killed) is dropped from the file, so the answers appended after it stay one per line."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = []
    for n, line in enumerate(lines):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if n != len(lines) - 1:
                raise
            path.write_text("".join(f"{kept}\n" for kept in lines[:-1]), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):  # a whole last record without its newline: the next goes on a line of its own
        path.write_text(text + "\n", encoding="utf-8")
    return {str(r.get("id")) for r in records}


def rejudge(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The records judged again by the current judge, and how many verdicts changed."""
    changed = 0
    fresh = []
    for r in records:
        _, confidence = split_answer(r.get("answer") or "")
        correct = not r.get("error") and is_correct(r.get("answer") or "", r["gold"])
        changed += correct != bool(r.get("correct"))
        fresh.append({**r, "correct": correct, "confidence": confidence})
    return fresh, changed


def recalibrate(records: list[dict[str, Any]], calibrator: Calibrator) -> tuple[list[dict[str, Any]], int]:
    """The records' confidence as `calibrator` states it, from the evidence each run recorded: exactly what
    the synthesis worker computes live (activities/synthesis.py), since nothing before the final score
    depends on the calibrator. Runs without usable evidence keep theirs (live, they are never calibrated)."""
    fresh, changed = [], 0
    for r in records:
        evidence = r.get("evidence") or {}
        if not evidence.get("coverage") or r.get("error"):
            fresh.append(r)
            continue
        probability, _ = calibrator.state(evidence, evidence_score=r.get("evidence_score"))
        fresh.append({**r, "confidence": r.get("evidence_score") if probability is None else probability})
        changed += 1
    return fresh, changed
