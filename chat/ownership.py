"""Whose run or conversation an id is, over HTTP. The API marks every id it hands out with the caller's tag
(chat/auth.owner_tag): a conversation is `c-<tag>-<random>`, a request `chat-<tag>-<random>` and its run
`agent-chat-<tag>-<random>`. Nothing is stored: the mark is the record, and only the caller's token yields
it. A caller reads what carries their mark; the `audit` role reads every run and conversation; a run that
waits for a decision is readable by whoever holds the role it waits for, who must see what they decide.
Nobody adds turns to another caller's conversation."""

from __future__ import annotations

import uuid

from chat.auth import Caller
from contracts.names import workflow_id_for
from contracts.override import Role
from contracts.run import RunStatus


def new_conversation_id(who: Caller) -> str:
    return f"c-{who.tag}-{uuid.uuid4().hex}"


def new_request_id(who: Caller) -> str:
    return f"chat-{who.tag}-{uuid.uuid4().hex}"


def owns_conversation(who: Caller, conversation_id: str) -> bool:
    return conversation_id.startswith(f"c-{who.tag}-")


def owns_run(who: Caller, workflow_id: str) -> bool:
    return workflow_id.startswith(workflow_id_for(f"chat-{who.tag}-"))


def may_read_run(who: Caller, workflow_id: str, status: RunStatus) -> bool:
    pending = status.pending_override
    return owns_run(who, workflow_id) or who.may(Role.AUDIT) or (pending is not None and who.may(pending.role))


def may_read_conversation(who: Caller, conversation_id: str) -> bool:
    return owns_conversation(who, conversation_id) or who.may(Role.AUDIT)
