"""The start-up warm-up never stands in the way: a model server that is not up yet costs nothing but the
first question's head start."""

from __future__ import annotations

from backends.llm import LLMClient
from embedded.processes import free_port
from worker.prompt_warm_up import warm_up


async def test_a_model_server_that_is_down_leaves_nothing_warmed_and_raises_nothing() -> None:
    llm = LLMClient(f"http://127.0.0.1:{free_port()}/v1", "scripted", timeout_s=2)
    try:
        assert await warm_up(llm, {"planner": "You plan.", "synthesis": "You answer."}) == []
    finally:
        await llm.aclose()
