"""A TCP proxy between one client and the Pulsar broker that a test can cut: every connection through it is
closed at once, and new ones are refused for a while, as when a client's network drops or its connection is
closed by the broker's liveness check. Only what goes through the proxy is cut: the worker and the bridge talk
to the broker directly.

A Pulsar client asks the broker where a topic lives and then connects there: the broker names its own address.
The proxy names itself instead (the same number of characters, so no frame's length changes), or the client
would go around it."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

from embedded.processes import free_port


class SeverableProxy:
    def __init__(self, target_url: str) -> None:
        target = urlsplit(target_url)
        self._target = (target.hostname or "127.0.0.1", target.port or 6650)
        self.port = free_port()
        while len(str(self.port)) != len(str(self._target[1])):
            self.port = free_port()
        self._broker_address = f"{self._target[0]}:{self._target[1]}".encode()
        self._own_address = f"127.0.0.1:{self.port}".encode()
        self.url = f"pulsar://127.0.0.1:{self.port}"
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._refuse_until = 0.0
        self.severed = 0  # connections cut so far
        self.refused = 0  # connections refused while cut off

    async def start(self) -> SeverableProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._close_all()

    async def __aenter__(self) -> SeverableProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def sever(self, refuse_for_s: float) -> None:
        """Cut every connection now and refuse new ones for `refuse_for_s` seconds."""
        self._refuse_until = asyncio.get_running_loop().time() + refuse_for_s
        self.severed += len(self._open)
        self._close_all()

    def _close_all(self) -> None:
        for writer in list(self._open):
            writer.transport.abort()  # a reset, not a polite close: nothing buffered gets through
        self._open.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if asyncio.get_running_loop().time() < self._refuse_until:
            self.refused += 1
            writer.transport.abort()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self._open.update((writer, upstream_writer))
        await asyncio.gather(
            self._pipe(reader, upstream_writer),
            self._pipe(upstream_reader, writer, self._broker_address, self._own_address),
            return_exceptions=True,
        )
        for end in (writer, upstream_writer):
            self._open.discard(end)
            end.transport.abort()

    @staticmethod
    async def _pipe(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, old: bytes = b"", new: bytes = b""
    ) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data.replace(old, new) if old else data)
                await writer.drain()
        writer.transport.abort()
