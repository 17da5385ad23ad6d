"""`tg-confidence calibrate` and the calibrator file the synthesis worker reads: labels from benchmark runs
(calibration split only) and from human override decisions; a bad file is reported, never fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.synthesis import calibrated
from cli.main import parse_args
from confidence.calibrator import CalibratorError
from contracts.query_path import SynthesisOutput
from service.calibrator_file import SHIPPED, CalibratorFile

pytestmark = pytest.mark.unit

ROWS = {"step_score": 0.9, "coverage": 1.0, "graph_rows": 1.0, "row_count": 0.3}
EMPTY = {"step_score": 0.9, "coverage": 1.0, "graph_rows": 1.0, "empty_result": 1.0}


def run_record(split: str, evidence: dict[str, float], correct: bool, **extra: object) -> str:
    return json.dumps({"id": "q", "split": split, "evidence": evidence, "correct": correct, **extra})


def benchmark_file(tmp_path: Path) -> Path:
    lines = []
    for i in range(30):
        lines.append(run_record("calibration", ROWS, i % 5 != 0))
        lines.append(run_record("calibration", EMPTY, i % 5 == 0))
        lines.append(run_record("heldout", EMPTY, True))  # must not be learnt from
    lines.append(run_record("calibration", ROWS, False, error="timeout"))  # an error is no label
    lines.append(run_record("calibration", {"coverage": 0.0}, False))  # never calibrated live
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def audit_file(tmp_path: Path) -> Path:
    def audit(decision: str) -> str:
        return json.dumps(
            {
                "execution_id": "agent-x",
                "evidence": EMPTY,
                "execution": [{"step_id": "s1", "override": {"decision": decision, "by": "ann"}}],
            }
        )

    path = tmp_path / "audit.jsonl"
    path.write_text(
        "\n".join(
            [audit("accept"), audit("abort"), audit("skip"), json.dumps({"execution_id": "agent-y", "execution": []})]
        )
        + "\n"
    )
    return path


def calibrate(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from cli.calibrate import fit_and_write

    code = fit_and_write(parse_args(["calibrate", *argv]))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_calibrate_learns_from_the_calibration_split_and_human_decisions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "calibrator.json"
    code, printed = calibrate(
        [str(benchmark_file(tmp_path)), "--audit", str(audit_file(tmp_path)), "--out", str(out_file)], capsys
    )
    assert code == 0, printed
    assert "62 labelled answer(s)" in printed  # 60 from the calibration split, accept + abort from the audit
    calibrator = CalibratorFile(out_file).current()
    assert calibrator.probability(ROWS) > 0.7 > 0.3 > calibrator.probability(EMPTY)


def test_calibrate_says_what_is_wrong_with_unusable_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    only_right = tmp_path / "right.jsonl"
    only_right.write_text(run_record("calibration", ROWS, True) + "\n")
    code, printed = calibrate([str(only_right), "--no-audit", "--dry-run"], capsys)
    assert code != 0 and "one right and one wrong" in printed
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{oops\n")
    code, printed = calibrate([str(broken), "--no-audit"], capsys)
    assert code != 0 and "broken.jsonl:1: not JSON" in printed


def test_the_worker_reads_a_recalibrated_file_without_a_restart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "calibrator.json"
    calibrate([str(benchmark_file(tmp_path)), "--no-audit", "--out", str(out_file)], capsys)
    source = CalibratorFile(out_file)
    before = source.current().probability(EMPTY)
    flipped = benchmark_file(tmp_path)
    flipped.write_text(
        flipped.read_text()
        .replace('"correct": false', '"correct": "x"')
        .replace('"correct": true', '"correct": false')
        .replace('"correct": "x"', '"correct": true')
    )
    calibrate([str(flipped), "--no-audit", "--out", str(out_file), "--l2", "0.5"], capsys)
    import os

    os.utime(out_file, (1, 1))  # a new mtime even on a coarse clock
    assert source.current().probability(EMPTY) > before


def test_an_unusable_calibrator_leaves_the_evidence_score_and_says_why(tmp_path: Path) -> None:
    corrupt = tmp_path / "calibrator.json"
    corrupt.write_text('{"format": 1, "kind": "logistic", "bias": 0, "weights": {"mood": 2}}')
    answer = SynthesisOutput(answer="Acme.", verification="verified")
    out = calibrated(answer, ROWS, CalibratorFile(corrupt))
    assert out.confidence is None
    assert "not calibrated" in out.confidence_reasons and "unknown feature(s) mood" in out.confidence_reasons
    missing = calibrated(answer, ROWS, CalibratorFile(tmp_path / "absent.json"))
    assert missing.confidence is None and "cannot read" in missing.confidence_reasons
    with pytest.raises(CalibratorError, match=r"absent\.json"):
        CalibratorFile(tmp_path / "absent.json").current()


def test_a_calibrated_answer_carries_its_probability_and_the_evidence_behind_it() -> None:
    out = calibrated(SynthesisOutput(answer="Acme.", verification="composed"), ROWS, CalibratorFile(SHIPPED))
    assert out.confidence is not None and 0.0 <= out.confidence <= 1.0
    assert out.evidence["composed"] == 1.0 and out.confidence_reasons.startswith("calibrated")


def test_an_excluded_feature_neither_moves_nor_blocks_a_calibrated_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "calibrator.json"
    code, printed = calibrate(
        [str(benchmark_file(tmp_path)), "--no-audit", "--exclude", "empty_result", "--out", str(out_file)], capsys
    )
    assert code == 0, printed
    calibrator = CalibratorFile(out_file).current()
    assert "empty_result" not in calibrator.weights and "empty_result" not in calibrator.ranges
    assert calibrator.trained_on["excluded"] == ["empty_result"]
    assert calibrator.state({**ROWS, "empty_result": 1.0})[0] == calibrator.state(ROWS)[0]
    code, printed = calibrate([str(benchmark_file(tmp_path)), "--no-audit", "--exclude", "empty_results"], capsys)
    assert code == 2 and "unknown feature(s) to exclude: empty_results" in printed
