"""With the broker down, `tg-confidence ask` and `tg-invoke-confidence-agent` say so in one line naming the
broker, and exit 2: the Pulsar client's own log of each reconnect attempt stays out of the way."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from embedded.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {
    "tg-confidence ask": ["-m", "cli", "ask", "-p", "{url}", "--timeout", "30", "Which supplier is largest?"],
    "tg-invoke-confidence-agent": [
        "-c",
        "from cli.invoke_agent import main; main()",
        "-p",
        "{url}",
        "-q",
        "Which supplier is largest?",
        "--timeout",
        "30",
    ],
}


async def run(argv: list[str]) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TGCA_")} | {"PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env, cwd=ROOT
    )
    _, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, err.decode()


async def test_an_unreachable_broker_is_one_line_naming_it() -> None:
    url = f"pulsar://127.0.0.1:{free_port()}"  # nothing listens there
    ran = await asyncio.gather(*(run([a.format(url=url) for a in argv]) for argv in COMMANDS.values()))
    for command, (code, stderr) in zip(COMMANDS, ran, strict=True):
        assert code == 2, (command, stderr)
        lines = stderr.splitlines()  # one line, not the client's reconnect attempts before it
        assert len(lines) == 1 and lines[0].startswith(f"error: Pulsar at {url} is unreachable"), (command, stderr)
