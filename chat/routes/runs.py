"""A run's state, and its events streamed again from where a client left them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from sse_starlette.sse import EventSourceResponse

from chat.dependencies import Deps, Who
from chat.event_stream import finished_run_events, sse_response, stream_events, stream_slot
from chat.models import RunView
from chat.run_access import readable_run

router = APIRouter()


@router.get("/runs/{workflow_id}/events", summary="Stream a run's events (again, from where a client left)")
async def run_events(
    workflow_id: str,
    request: Request,
    who: Who,
    deps: Deps,
    after: Annotated[int, Query(ge=0)] = 0,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventSourceResponse:
    start = resumed_from(last_event_id, after)  # read before a slot is taken: nothing after may fail to give it back
    view = await readable_run(deps, workflow_id, who)
    slot = stream_slot(deps, who)
    try:
        stream = deps.streams.find(workflow_id)
        if stream is None and view.execution != "RUNNING":
            return sse_response(finished_run_events(deps, workflow_id), slot)
        stream = stream or deps.streams.follow(workflow_id)
        return sse_response(stream_events(deps, stream, min(start, len(stream.messages)), request), slot)
    except BaseException:
        slot.give_back()
        raise


EVENT_ID_DIGITS = 18  # an event id is a count of messages: more digits than this is no id the stream sent


def resumed_from(last_event_id: str | None, after: int) -> int:
    """The message a reconnecting client resumes from: its Last-Event-ID when that is an id the stream could have
    sent (ASCII digits, a few: `isdigit` alone takes "²", and int() of 4,300 digits raises), else `after`."""
    if last_event_id and len(last_event_id) <= EVENT_ID_DIGITS and last_event_id.isascii() and last_event_id.isdigit():
        return int(last_event_id)
    return after


@router.get("/runs/{workflow_id}", response_model=RunView, summary="A run's state (the `status` query)")
async def get_run(workflow_id: str, who: Who, deps: Deps) -> RunView:
    return await readable_run(deps, workflow_id, who)
