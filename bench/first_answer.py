"""The first answer on a freshly started stack, for two versions of the code side by side.

Each round starts the embedded stack (the demo graph, the local model) from each code directory in turn, asks
one question the moment the stack is ready, times the answer and stops the stack. The first question of a
worker competes with its prompt warm-ups for the model server, which evaluates one request at a time: this is
where a warm-up that does not yield shows (worker/prompt_warm_up.py).

    git worktree add --detach /tmp/wt-before <commit>
    .venv/bin/python bench/first_answer.py --code /tmp/wt-before /work/main --rounds 3 \\
        --out bench/results/first-answer.json

Each code directory runs with this interpreter, from its own directory (its `worker`, `bridge` and `bench`
packages), so the other version needs only a checkout, not a virtualenv.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

QUESTION = "Which supplier has the most purchase orders?"


async def one(question: str, timeout_s: float) -> dict[str, Any]:
    """Start the stack from the current directory's code, ask once, stop."""
    sys.path.insert(0, os.getcwd())
    from bench.kgqa.runner import Interrupt, ask_one, running_stack

    started = time.perf_counter()
    async with running_stack("procurement", Interrupt(), say=lambda _: None) as running:
        ready_s = time.perf_counter() - started
        outcome = await ask_one(running.stack, question, timeout_s)
    return {
        "stack_ready_s": round(ready_s, 1),
        "first_answer_s": round(outcome.seconds, 1),
        "answered": outcome.error is None and bool(outcome.answer),
        "error": outcome.error,
    }


def run_child(code: Path, question: str, timeout_s: float) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one", "--question", question, "--timeout", str(timeout_s)],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s + 600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"answered": False, "error": f"exit {done.returncode}: {done.stderr[-400:]}"}
    return json.loads(lines[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--code", type=Path, nargs="+", help="code directories (checkouts) to compare")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--question", default=QUESTION)
    p.add_argument("--timeout", type=float, default=400.0, help="seconds to wait for the answer")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # the child: one stack, one question
    args = p.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(one(args.question, args.timeout))))
        return 0
    if not args.code:
        p.error("give --code with one or more checkouts")
    runs: list[dict[str, Any]] = []
    for round_no in range(args.rounds):
        for code in args.code:  # alternating, so a slow stretch of the machine hits both
            result = {"code": str(code), "round": round_no, **run_child(code, args.question, args.timeout)}
            print(json.dumps(result), flush=True)
            runs.append(result)
    summary = {}
    for code in args.code:
        times = [r["first_answer_s"] for r in runs if r["code"] == str(code) and r.get("answered")]
        summary[str(code)] = {
            "answered": len(times),
            "of": args.rounds,
            "median_first_answer_s": statistics.median(times) if times else None,
        }
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(
            json.dumps({"question": args.question, "runs": runs, "summary": summary}, indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
