"""Bounds on the server-sent event streams: each open stream holds a connection and asks Temporal for its
run's status once a second, so there are at most `total` open at once and `per_caller` for one caller;
beyond that a new stream is refused with 429 (the client tries again later) rather than slowing every
other stream."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


class TooManyStreams(Exception):
    pass


@dataclass
class StreamSlot:
    """One taken slot; giving it back twice is harmless (the stream's end and the response's end both do)."""

    slots: StreamSlots
    who: str
    returned: bool = False

    def give_back(self) -> None:
        if not self.returned:
            self.returned = True
            self.slots.release(self.who)


@dataclass
class StreamSlots:
    total: int
    per_caller: int
    _open: Counter[str] = field(default_factory=Counter)

    @property
    def open(self) -> int:
        return sum(self._open.values())

    def take(self, who: str) -> StreamSlot:
        if self.open >= self.total:
            raise TooManyStreams(f"the API has {self.total} streams open, its limit: try again shortly")
        if self._open[who] >= self.per_caller:
            raise TooManyStreams(f"{who} has {self.per_caller} streams open, the limit per caller: close one")
        self._open[who] += 1
        return StreamSlot(self, who)

    def release(self, who: str) -> None:
        self._open[who] -= 1
        if self._open[who] <= 0:
            del self._open[who]
