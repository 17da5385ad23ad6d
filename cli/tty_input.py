"""Lines typed at the terminal, read without blocking the event loop: a question can be withdrawn when the
run moves on without the answer (decided elsewhere, or its time ran out), which a thread blocked in
input() could not be, and the run's messages keep arriving meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios


class LineReader:
    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self._buffer = b""

    async def readline(self) -> str | None:
        """The next line without its newline; None at the end of input (Ctrl-D on an empty line). Not
        sticky: at a terminal the next question may still be answered."""
        while b"\n" not in self._buffer:
            await self._readable()
            chunk = os.read(self.fd, 4096)
            if not chunk:
                line, self._buffer = self._buffer, b""
                return line.decode(errors="replace") if line else None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")

    def discard_typed(self) -> None:
        """Forget what was typed for a question that was withdrawn, so it does not answer the next one."""
        self._buffer = b""
        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(self.fd, termios.TCIFLUSH)

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(self.fd, wake)
        try:
            await ready
        finally:
            loop.remove_reader(self.fd)
