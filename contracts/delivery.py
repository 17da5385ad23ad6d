"""Dropping repeated deliveries. Messages are delivered at least once: a retried publish sends them again.
A chunk of an entity shares its message_id with the entity's other chunks (as TrustGraph's do), so the
message_id alone cannot tell a repeat from the next chunk: every message this service publishes carries the
Pulsar property `delivery_id`, one per message and the same when it is sent again."""

from __future__ import annotations

from collections.abc import Mapping

from contracts.wire import AgentResponse

DELIVERY_PROPERTY = "delivery_id"


def delivered(response: AgentResponse, properties: Mapping[str, str] | None) -> AgentResponse:
    """`response` as decoded from a Pulsar message, with that message's delivery id."""
    response.delivery_id = str((properties or {}).get(DELIVERY_PROPERTY) or "")
    return response


def delivery_key(response: AgentResponse) -> str | None:
    """What one delivery is recognised by: its delivery id; from a publisher that sets none (TrustGraph's own
    agent) the message_id of a whole message. None for a chunk without a delivery id, which is never dropped: it
    cannot be told from the entity's next chunk."""
    if response.delivery_id:
        return f"delivery:{response.delivery_id}"
    if response.message_id and response.end_of_message:
        return f"message:{response.message_id}"
    return None


class Repeats:
    """The delivery keys seen for one request."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def repeated(self, response: AgentResponse) -> bool:
        """True when `response` was delivered before (and should be dropped); remembers it otherwise."""
        key = delivery_key(response)
        if key is None:
            return False
        if key in self._seen:
            return True
        self._seen.add(key)
        return False


def sequence_number(delivery_id: str) -> int | None:
    """The place of a message in its run's sequence: `<run>#<n>` (workflows/outbox.py numbers every message it
    sends from 1 up, without holes). None for a delivery id outside that sequence: a streamed answer's
    sentence (`<run>#answer.<n>`), or a message from a publisher that numbers nothing."""
    _, hash_sign, number = delivery_id.rpartition("#")
    return int(number) if hash_sign and number.isascii() and number.isdigit() else None


class Sequence:
    """Watches one run's delivery ids for holes: message n+2 arriving after n means n+1 never came (a
    non-persistent topic drops what a reconnecting consumer was not there to take)."""

    def __init__(self) -> None:
        self.highest = 0  # the highest sequence number seen so far

    def gap(self, response: AgentResponse) -> bool:
        """Record `response`; True when it shows that a message before it never came (a repeat never does)."""
        number = sequence_number(response.delivery_id)
        if number is None or number <= self.highest:
            return False
        skipped = number > self.highest + 1
        self.highest = number
        return skipped
