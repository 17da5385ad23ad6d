"""`tg-invoke-confidence-agent`: a TrustGraph user's `tg-invoke-agent` command line, pointed at this service
on a non-default flow, prints the answer (and with -v the steps) and exits 0."""

from __future__ import annotations

import pytest

from cli.invoke_agent import invoke, parse_args
from tests.integration.test_end_to_end import reads_the_rows
from tests.scripted_llm import ScriptedLLM

QUESTION = "Which supplier has the most purchase orders?"


@pytest.mark.parametrize("streaming", [True, False])
async def test_trustgraph_flags_get_the_answer_alone(make_stack, unique: str, capsys, streaming: bool) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url, flow="myflow")
        argv = [
            "-p",
            stack.config.pulsar_url,
            "-w",
            f"test-{unique}",
            "-f",
            "myflow",
            "-q",
            QUESTION,
            "-C",
            "acme",
            "--timeout",
            "120",
            *([] if streaming else ["--no-streaming"]),
        ]
        code = await invoke(parse_args(argv))
        requests = list(llm.requests)
    out = capsys.readouterr().out
    # the services run in this process and log here too: the answer is told apart by its text
    [answer] = [line for line in out.splitlines() if "has the most purchase orders (" in line]
    assert code == 0 and not answer.startswith("[")  # the text alone, as tg-invoke-agent prints it
    assert any(line.startswith("Confidence: 0.") for line in out.splitlines())
    assert "[thought]" not in out and "[observation]" not in out and f"? {QUESTION}" not in out
    assert requests  # the service on flow myflow answered, not some other


async def test_verbose_shows_the_thoughts_and_observations(make_stack, unique: str, capsys) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url, flow="myflow")
        code = await invoke(
            parse_args(
                [
                    "-p",
                    stack.config.pulsar_url,
                    "-w",
                    f"test-{unique}",
                    "-f",
                    "myflow",
                    "-q",
                    QUESTION,
                    "-v",
                    "--no-streaming",
                    "--timeout",
                    "120",
                ]
            )
        )
    out = capsys.readouterr().out
    assert code == 0 and "[thought] Planning how to answer" in out and "[observation] Plan with 2 step(s)" in out
    assert "[answer] " in out
