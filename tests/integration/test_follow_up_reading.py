"""Reading a follow-up through the real LLM client, with the model scripted: a model that claims the
conversation holds the answer is overruled when the question names what the conversation never stated."""

from __future__ import annotations

import json
from typing import Any

from activities.follow_up import FollowUpActivities
from backends.llm import LLMClient
from contracts.conversation import FollowUpInput
from service.prompts import PromptTemplates
from tests.scripted_llm import ScriptedLLM

CONVERSATION = (
    "User: Which three teams scored the most goals?\n"
    "Agent: Harbour City, Lakeside Rovers and Old Mill scored the most goals."
)


async def read(rewritten: str, latest: str) -> Any:
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        return 200, json.dumps({"question": rewritten, "from_conversation": True})

    with ScriptedLLM(respond) as server:
        llm = LLMClient(server.base_url, "scripted", timeout_s=10)
        try:
            return await FollowUpActivities(llm, PromptTemplates.load()).read_follow_up(
                FollowUpInput(conversation=CONVERSATION, question=latest)
            )
        finally:
            await llm.aclose()


async def test_a_question_naming_what_the_conversation_never_stated_goes_to_the_graph() -> None:
    reading = await read(
        "Which of Harbour City, Lakeside Rovers and Old Mill play in Northport?", "Which of those play in Northport?"
    )
    assert reading.question == "Which of Harbour City, Lakeside Rovers and Old Mill play in Northport?"
    assert reading.from_conversation is False


async def test_a_question_about_what_the_conversation_states_is_answered_from_it() -> None:
    reading = await read(
        "Which of Harbour City, Lakeside Rovers and Old Mill scored the most goals?", "Which of those scored the most?"
    )
    assert reading.from_conversation is True
