"""Reading a follow-up in its conversation: the question rewritten to stand on its own ("pay them" ->
"pay purchase orders PO-1 and PO-2"), and whether the conversation already holds its answer."""

from __future__ import annotations

import json

import structlog
from temporalio import activity

from backends.llm import ChatModel
from contracts.conversation import FollowUpInput, FollowUpOutput
from contracts.names import Activities
from planning.conversation_memory import names_beyond, plausible_rewrite
from service.prompts import PromptTemplates

log = structlog.get_logger(__name__)
FOLLOW_UP_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "from_conversation": {"type": "boolean"}},
    "required": ["question", "from_conversation"],
}


class FollowUpActivities:
    def __init__(self, llm: ChatModel, prompts: PromptTemplates) -> None:
        self.llm = llm
        self.prompts = prompts

    @activity.defn(name=Activities.READ_FOLLOW_UP)
    async def read_follow_up(self, request: FollowUpInput) -> FollowUpOutput:
        """An unusable reply keeps the question as the user wrote it: the turn then runs as a new question."""
        completion = await self.llm.chat(
            [
                {"role": "system", "content": self.prompts.render("follow_up_system")},
                {
                    "role": "user",
                    "content": self.prompts.render(
                        "follow_up_user", conversation=request.conversation, question=request.question
                    ),
                },
            ],
            json_schema=FOLLOW_UP_SCHEMA,
            max_tokens=300,
        )
        try:
            reply = json.loads(completion.text)
            rewritten = str(reply["question"]).strip()
            from_conversation = reply.get("from_conversation") is True
        except (json.JSONDecodeError, KeyError, TypeError):
            log.warning("follow_up_unusable", text=completion.text[:200])
            return FollowUpOutput(question=request.question)
        if not plausible_rewrite(request.question, rewritten):
            log.warning("follow_up_rewrite_refused", text=rewritten[:200])
            rewritten = request.question
        beyond = names_beyond(rewritten, request.conversation) if from_conversation else []
        if beyond:
            log.info("follow_up_needs_the_graph", names=beyond)
        return FollowUpOutput(
            question=rewritten,
            from_conversation=from_conversation and not beyond,
            changed=rewritten != request.question.strip(),
        )
