"""The labelled benchmark ("Answers you can trust"): the agent judged by measured answers, not by its own
words. Questions with gold answers computed from the data, asked one at a time through the real embedded
stack and the real local model; accuracy, and whether the stated confidence separates right from wrong.

    .venv/bin/python bench/kgqa.py --dataset procurement --limit 10            # start the stack, ask, score
    .venv/bin/python bench/kgqa.py --dataset countries --split all --out c.jsonl
    .venv/bin/python bench/kgqa.py --score results.jsonl                         # score a results file only
    .venv/bin/python bench/kgqa.py --score a.jsonl b.jsonl --calibrator c.json   # ... with another calibrator
    .venv/bin/python bench/kgqa.py --dataset countries --list                    # the questions, nothing run
    .venv/bin/python bench/kgqa.py --questions geonames-seed1.jsonl --limit 40     # a generated set (any graph)
    .venv/bin/python bench/kgqa.py --questions g.jsonl --limit 250 --out r.jsonl --resume  # go on after a cut-off
    .venv/bin/python bench/kgqa.py --questions g.jsonl --client trustgraph       # through TrustGraph's own client

Generated sets (bench/kgqa_questions.py: questions made from a graph's live schema and data, for the public
graphs of bench/graphs) are asked of the graph the file names, loaded into the stack first.

Splits: a calibrator may be fitted on `calibration` and is reported on `heldout` only (decided by a hash
of each question's id: about 40/60). The second dataset (countries) is loaded by scripts/load_countries.py's
code from the PyPI package countryinfo; see bench/kgqa/countries_data.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.kgqa import metrics, report, results
from bench.kgqa.questions import SPLITS, Question, select

DATASETS = ("procurement", "countries")


def question_set(dataset: str) -> list[Question]:
    if dataset == "procurement":
        from bench.kgqa import procurement

        return procurement.questions()
    from bench.kgqa import countries

    return countries.questions()


def command_line() -> str:
    return " ".join([".venv/bin/python", "bench/kgqa.py", *(shlex.quote(a) for a in sys.argv[1:])])


def print_metrics(records: list[dict[str, Any]], dataset: str, split: str, command: str) -> None:
    m = metrics.compute(metrics.judged(r) for r in records)
    print()
    print(report.markdown(m, dataset=dataset, split=split, command=command, date=time.strftime("%Y-%m-%d")))


def score_only(paths: list[Path], calibrator_path: Path | None) -> int:
    records: list[dict[str, Any]] = []
    for path in paths:
        judged, changed = results.rejudge(results.read(path))
        records += judged
        if changed:
            print(f"note: the current judge changed {changed} verdict(s) of {path}", flush=True)
    if calibrator_path is not None:
        from service.calibrator_file import CalibratorFile

        records, recalibrated = results.recalibrate(records, CalibratorFile(calibrator_path).current())
        print(
            f"note: {recalibrated} confidence(s) restated by the calibrator {calibrator_path}, from the evidence "
            "each run recorded",
            flush=True,
        )
    datasets = sorted({r.get("dataset") or "?" for r in records})
    splits = sorted({r.get("split") or "?" for r in records})
    ran = sorted({r.get("command") or "" for r in records} - {""})
    command = ran[0] if len(ran) == 1 else command_line()
    print_metrics(records, "+".join(datasets), "+".join(splits), command)
    return 0


def list_questions(questions: list[Question]) -> int:
    for q in questions:
        print(f"{q.id}\t{q.split}\t{q.category}\t{q.text}\t{json.dumps(q.gold, ensure_ascii=False)[:160]}")
    counts = Counter((q.category, q.split) for q in questions)
    print(f"\n{len(questions)} questions")
    for category in sorted({c for c, _ in counts}):
        cal, held = counts[(category, "calibration")], counts[(category, "heldout")]
        print(f"  {category:<14} calibration {cal:>3}  heldout {held:>3}")
    return 0


def asker_for(client: str, stack: Any) -> contextlib.AbstractAsyncContextManager[Any]:
    """How each question is asked: the project's own `ask` (which recovers from Temporal what the topic
    dropped), or TrustGraph's own request/response client (which only the end of dialog's repeat can help)."""
    if client == "trustgraph":
        from bench.kgqa.trustgraph_client import trustgraph_asker

        return trustgraph_asker(stack)
    return contextlib.nullcontext(None)


async def run(args: argparse.Namespace, questions: list[Question]) -> int:
    from bench.kgqa.runner import STACK_ERRORS, Interrupt, ask_all, install_interrupt, running_stack

    out_path = args.out or Path(f"kgqa-{args.dataset}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    answered = results.kept_answers(out_path) if args.resume and out_path.exists() else set()
    if answered:
        questions = [q for q in questions if q.id not in answered]
        print(f"resuming: {len(answered)} question(s) already answered in {out_path}", flush=True)
    interrupt = Interrupt()
    install_interrupt(interrupt)
    print(f"{len(questions)} question(s) ({args.dataset}, split {args.split}); results in {out_path}", flush=True)
    try:
        with out_path.open("a" if args.resume else "w", encoding="utf-8") as out:
            async with running_stack(
                args.dataset, interrupt, args.data_dir, say=lambda text: print(text, flush=True)
            ) as running:
                async with asker_for(args.client, running.stack) as asker:
                    await ask_all(
                        running,
                        questions,
                        args.dataset,
                        out,
                        args.ask_timeout,
                        interrupt,
                        say=lambda text: print(text, flush=True),
                        command=command_line(),
                        asker=asker,
                    )
    except asyncio.CancelledError:
        if not interrupt.requested:
            raise
    except STACK_ERRORS as exc:
        print(f"error: the embedded stack did not start: {exc}", file=sys.stderr, flush=True)
        return 2
    if interrupt.requested:
        print("interrupted: the metrics below cover the questions that finished", flush=True)
    records = results.read(out_path) if out_path.exists() else []
    print_metrics(records, args.dataset, args.split, command_line())
    return 130 if interrupt.requested else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", choices=DATASETS, default="procurement")
    p.add_argument(
        "--questions",
        type=Path,
        default=None,
        help="a generated questions file (bench/kgqa_questions.py); its graph replaces --dataset",
    )
    p.add_argument(
        "--split",
        choices=(*SPLITS, "all"),
        default="heldout",
        help="report on heldout; fit any calibrator on calibration",
    )
    p.add_argument("--limit", type=int, default=None, help="ask only the first N (a fixed mix of categories)")
    p.add_argument(
        "--skip",
        type=int,
        default=0,
        help="leave out the first N of that mix (asked in an earlier run); --limit counts after them",
    )
    p.add_argument(
        "--out", type=Path, default=None, help="results file (JSON lines); default kgqa-<dataset>-<time>.jsonl"
    )
    p.add_argument(
        "--client",
        choices=("ask", "trustgraph"),
        default="ask",
        help="ask with the project's own client (default) or with TrustGraph's request/response client",
    )
    p.add_argument("--ask-timeout", type=float, default=300.0, help="seconds to wait for one answer")
    p.add_argument("--data-dir", type=Path, default=None, help="where the stack keeps data and logs (default: temp)")
    p.add_argument("--score", type=Path, nargs="+", metavar="RESULTS", help="score results files; run nothing")
    p.add_argument(
        "--calibrator",
        type=Path,
        default=None,
        help="with --score: restate each confidence with this calibrator from the recorded evidence",
    )
    p.add_argument("--list", action="store_true", help="print the questions and their golds; run nothing")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the answers already in --out and ask only the questions it lacks (a run that was cut "
        "off); the metrics cover the whole file",
    )
    p.add_argument(
        "--ids",
        nargs="+",
        default=None,
        metavar="ID",
        help="ask only these questions (any split), e.g. to look again at the ones a run got wrong",
    )
    args = p.parse_args()
    if args.score:
        return score_only(args.score, args.calibrator)
    if args.questions:
        from bench.kgqa_questions import read

        args.dataset, every = read(args.questions)
    else:
        every = question_set(args.dataset)
    questions = select(every, args.split, None if args.limit is None else args.skip + args.limit)[args.skip :]
    if args.ids:
        wanted = set(args.ids)
        questions = [q for q in every if q.id in wanted]
        if len(questions) != len(wanted):
            unknown = wanted - {q.id for q in questions}
            print(f"error: no question with id {', '.join(sorted(unknown))} in {args.dataset}", file=sys.stderr)
            return 2
    if args.list:
        return list_questions(questions)
    if args.resume and args.out is None:
        print("error: --resume needs --out, the results file to go on with", file=sys.stderr)
        return 2
    return asyncio.run(run(args, questions))


if __name__ == "__main__":
    sys.exit(main())
