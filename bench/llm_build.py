"""How fast the local model reads a prompt and writes tokens, per llama-cpp-python build, side by side.

    .venv/bin/python bench/llm_build.py --python .venv/bin/python /tmp/portable/bin/python [--rounds 3]

Each --python is an interpreter with llama-cpp-python installed (scripts/setup.sh builds one for this CPU;
a second venv with another build, e.g. the portable AVX2-only flags, is the comparison). The builds take
turns, one process per round and build, each loading the local model with the embedded server's settings
(2 threads, no per-token logits, batches of 64) and timing a ~900-token prompt that no cache holds and 48
greedy tokens after it, twice. Reports each build's median prompt and generation tokens per second and the
ratio to the first build. A question costs ~700-1,100 prompt tokens and ~100-180 written ones
(docs/benchmarks/local-model.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WRITTEN = 48


def measure(model: str, threads: int) -> dict[str, list[float]]:
    """In the child process: tokens per second reading a fresh prompt, and writing after it."""
    from llama_cpp import Llama

    llm = Llama(model, n_ctx=4096, n_threads=threads, n_batch=64, logits_all=False, verbose=False)
    text = (ROOT / "service" / "prompts.yaml").read_text()[:3500]
    reading, writing = [], []
    for round_ in range(2):
        prompt = llm.tokenize(f"Round {round_} at {time.time()}\n{text}\nSummarise the above:".encode())
        llm.reset()
        started = time.perf_counter()
        llm.eval(prompt)
        reading.append(len(prompt) / (time.perf_counter() - started))
        started, written = time.perf_counter(), 0
        for _ in llm.generate([], temp=0.0, reset=False):
            written += 1
            if written >= WRITTEN:
                break
        writing.append(written / (time.perf_counter() - started))
    return {"prompt": reading, "generation": writing}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python", nargs="+", default=[sys.executable], help="interpreters, each with a build")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # the child's part
    p.add_argument("--model", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.measure:
        print(json.dumps(measure(args.model, args.threads)))
        return 0
    sys.path.insert(0, str(ROOT))
    from embedded.model_weights import resolve_model

    model = str(resolve_model().path)
    rates: dict[str, dict[str, list[float]]] = {py: {"prompt": [], "generation": []} for py in args.python}
    for _ in range(args.rounds):
        for python in args.python:  # taking turns: the machine's noise falls on every build alike
            out = subprocess.run(
                [python, __file__, "--measure", "--model", model, "--threads", str(args.threads)],
                capture_output=True,
                text=True,
                check=True,
            )
            for kind, values in json.loads(out.stdout.strip().splitlines()[-1]).items():
                rates[python][kind].extend(values)
    first = args.python[0]
    print("| build (interpreter) | prompt tokens/s (median) | ratio | written tokens/s (median) | ratio |")
    print("|---|---|---|---|---|")
    for python, r in rates.items():
        prompt, gen = statistics.median(r["prompt"]), statistics.median(r["generation"])
        print(
            f"| {python} | {prompt:.1f} | {prompt / statistics.median(rates[first]['prompt']):.2f}x | "
            f"{gen:.1f} | {gen / statistics.median(rates[first]['generation']):.2f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
