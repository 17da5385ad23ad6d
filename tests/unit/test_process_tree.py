"""A part's resources are its whole process tree's: the benches' CPU and memory figures count the children a
part starts (the Temporal CLI's server, the LLM server's workers), not just the process they launched."""

from __future__ import annotations

import subprocess
import sys

from embedded.processes import tree_cpu_seconds, tree_pids

BURN_THEN_WAIT = """
import sys, time
while time.process_time() < 0.3:
    pass
print("burnt", flush=True)
sys.stdin.read()
"""


def test_a_grandchilds_cpu_counts_toward_its_ancestor() -> None:
    # a shell whose child burns 0.3 s of CPU and then waits on stdin: the shell itself uses next to none
    shell = subprocess.Popen(
        ["/bin/sh", "-c", f'exec 3<&0; {sys.executable} -c "$0" <&3', BURN_THEN_WAIT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert shell.stdout is not None and shell.stdout.readline().strip() == "burnt"
        assert len(tree_pids(shell.pid)) == 2
        assert tree_cpu_seconds(shell.pid) >= 0.29
    finally:
        assert shell.stdin is not None
        shell.stdin.close()
        shell.wait(timeout=10)


def test_a_gone_process_counts_nothing() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert tree_cpu_seconds(gone.pid) == 0.0
