"""A fault-injecting OpenAI-compatible server for tests: a real HTTP/1.1 server on 127.0.0.1.

Each request to `/v1/chat/completions` takes the next scripted `Fault` (or the default): a latency,
then a correct answer (streamed as server-sent events when asked), HTTP 500, malformed JSON, an intent
outside the enum, a missing field, a connection reset, or a response that never ends. The hostile
modes: `oversized` (a valid answer padded with `size` spaces), `gzip_bomb` (the same, gzip-compressed:
`size` bytes from about size/1000 on the wire), `slowloris` (a byte every `latency` seconds, forever)
and `malformed_chunk` (`chunk` as the one event of a stream, or as the body). While it waits or
streams it watches the socket, and records every connection the client closed before the answer was
complete, so tests can see cancellation reach the wire. `props`, when set, is the hostile fault
`GET /props` answers with (the start-up probe of an endpoint of kind `auto`); else it is a 404, as
an OpenAI server's.

With `slots=N` it behaves like a saturated llama-server: at most N chat requests are answered at once
(each fault's latency runs once it holds a slot), the rest wait in the server's own queue, and `/props`
reports `total_slots` the way llama-server does (so the client detects the kind `llama`; declare
`#mode=schema` in the URL, as this server has no `/tokenize`). With `shared=True` its answers share
one core, as a model's on one thread do: a fault's latency is multiplied by the requests it answers
at once when that one begins.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import socket
import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Coroutine, Iterator
from typing import Any

KINDS = (
    "ok", "http_500", "malformed_json", "bad_intent", "missing_field", "reset", "never_ends",
    "oversized", "gzip_bomb", "slowloris", "malformed_chunk",
)  # fmt: skip
PIECE = 1 << 16  # padding is made and sent in pieces this big: a 1 GB answer never sits in memory
STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


@dataclasses.dataclass(frozen=True)
class Fault:
    kind: str = "ok"
    latency: float = 0.0
    intent: str = "attack"
    urgency: float = 0.5
    target_id: int | None = None
    size: int = 0  # oversized, gzip_bomb: bytes of padding
    chunk: str = ""  # malformed_chunk: the event's data

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind

    def content(self) -> str:
        if self.kind == "malformed_json":
            return '{"intent": "' + self.intent + '", "urgency": '
        if self.kind == "bad_intent":
            return json.dumps({"intent": "dance_wildly", "urgency": self.urgency})
        if self.kind == "missing_field":
            return json.dumps({"intent": self.intent})
        answer: dict[str, Any] = {"intent": self.intent, "urgency": self.urgency}
        if self.target_id is not None:
            answer["target_id"] = self.target_id
        return json.dumps(answer)


@dataclasses.dataclass
class Seen:
    """One request as the server saw it."""

    fault: Fault
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float
    closed_by_client: bool = False


class FaultServer:
    def __init__(
        self,
        port: int = 0,
        default: Fault | None = None,
        linger_close: float | None = None,
        slots: int | None = None,
        shared: bool = False,
    ) -> None:
        """linger_close: like llama-server, close a streamed response's connection this many seconds
        after its last chunk, without answering whatever the client sent on it meanwhile.
        slots: answer at most this many chat requests at once, and report them on `/props`."""
        self.default = default or Fault()
        self.props: Fault | None = None  # what GET /props answers (a hostile mode), None: 404
        self.linger_close = linger_close
        self.slots = slots
        self.shared = shared
        self._slots: asyncio.Semaphore | None = None
        self._script: deque[Fault] = deque()
        self.seen: list[Seen] = []
        self._port = port
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-llm-server", daemon=True)
        self._lock = threading.Lock()
        self.active = 0  # chat requests being answered now
        self.max_active = 0
        self._writers: set[asyncio.StreamWriter] = set()  # every accepted connection still open

    # -- control (test thread) -------------------------------------------------------------------
    def script(self, *faults: Fault) -> None:
        with self._lock:
            self._script.extend(faults)

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def closed_by_client(self) -> int:
        return sum(1 for seen in self.seen if seen.closed_by_client)

    def start(self) -> FaultServer:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        started.result(timeout=10)
        return self

    async def _start(self) -> None:
        if self.slots is not None:
            self._slots = asyncio.Semaphore(self.slots)
        self._server = await asyncio.start_server(self._accepted, "127.0.0.1", self._port)
        self._port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _stop(self) -> None:
        assert self._server is not None
        # Python 3.11's server fails an assertion building the transport of a connection accepted just
        # before its close, and leaks the socket: stop accepting first, let what was accepted get its
        # transport, then close
        for listening in self._server.sockets:
            self._loop.remove_reader(listening.fileno())
        await asyncio.sleep(0)
        self._server.close()
        # a handler starts a loop turn after its connection, and one cancelled before its first step
        # never runs its `finally`: cancel the tasks and close every connection until none of either
        # is left, or a socket outlives the loop (a ResourceWarning at teardown)
        while True:
            await asyncio.sleep(0)  # also runs the closed transports' callbacks, which close the sockets
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if not tasks and not self._writers:
                break
            for task in tasks:
                task.cancel()
            for writer in self._writers:
                writer.close()
            self._writers.clear()
            await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- serving (server thread) -----------------------------------------------------------------
    def _next_fault(self) -> Fault:
        with self._lock:
            return self._script.popleft() if self._script else self.default

    def _accepted(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> Coroutine[Any, Any, None]:
        """Called at once on accepting, so `_stop` knows the connection even if its handler never starts."""
        self._writers.add(writer)
        return self._handle(reader, writer)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if method == "GET" and path.endswith("/health"):
            await self._send(writer, 200, b'{"status":"ok"}')
            return True
        if method == "GET" and path.endswith("/props") and self.props is not None:
            probe = Seen(self.props, {}, headers, time.monotonic())
            return await self._hostile(reader, writer, self.props, probe)
        if method == "GET" and path.endswith("/props") and self.slots is not None:
            props = {"total_slots": self.slots, "default_generation_settings": {}}
            await self._send(writer, 200, json.dumps(props).encode())
            return True
        if method != "POST" or not path.endswith("/chat/completions"):
            await self._send(writer, 404, b'{"error":"not found"}')
            return True
        fault = self._next_fault()
        seen = Seen(fault, json.loads(body), headers, time.monotonic())
        self.seen.append(seen)
        async with self._slots or contextlib.nullcontext():
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            try:
                return await self._answer(reader, writer, fault, seen)
            finally:
                self.active -= 1

    async def _answer(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fault: Fault, seen: Seen
    ) -> bool:
        latency = fault.latency * self.active if self.shared else fault.latency
        if await self._client_closed_within(reader, latency):
            seen.closed_by_client = True
            return False
        if fault.kind == "http_500":
            await self._send(writer, 500, b'{"error":{"message":"injected failure"}}')
            return True
        if fault.kind == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        content = fault.content()
        if fault.kind in ("oversized", "gzip_bomb", "slowloris", "malformed_chunk"):
            return await self._hostile(reader, writer, fault, seen)
        if fault.kind == "never_ends":
            writer.write(STREAM_HEAD)
            writer.write(_chunk(_event(content[:5])))
            await writer.drain()
            await self._client_closed_within(reader, 3600.0)
            seen.closed_by_client = True
            return False
        if seen.body.get("stream"):
            writer.write(STREAM_HEAD)
            for start in range(0, len(content), 8):
                writer.write(_chunk(_event(content[start : start + 8])))
            writer.write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            await writer.drain()
            if self.linger_close is not None:
                await asyncio.sleep(self.linger_close)
                return False
            return True
        completion = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        await self._send(writer, 200, json.dumps(completion).encode())
        return True

    async def _hostile(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fault: Fault, seen: Seen
    ) -> bool:
        stream = bool(seen.body.get("stream"))
        try:
            if fault.kind == "slowloris":
                writer.write(STREAM_HEAD)
                while not await self._client_closed_within(reader, max(fault.latency, 0.01)):
                    writer.write(_chunk(b":\n"))  # a comment line: bytes, never an answer
                    await writer.drain()
                seen.closed_by_client = True
                return False
            if fault.kind == "malformed_chunk":
                if stream:
                    data = b"data: " + fault.chunk.encode() + b"\n\n"
                    writer.write(STREAM_HEAD + _chunk(data) + _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
                    await writer.drain()
                    return True
                await self._send(writer, 200, fault.chunk.encode())
                return True
            pieces = _padded_answer(fault.content(), fault.size, stream)
            if fault.kind == "gzip_bomb":
                pieces = _gzipped(pieces)
                encoding = b"content-encoding: gzip\r\n"
            else:
                encoding = b""
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" + encoding)
            writer.write(b"transfer-encoding: chunked\r\n\r\n")
            for piece in pieces:
                writer.write(_chunk(piece))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            seen.closed_by_client = True
            return False
        return True

    @staticmethod
    async def _client_closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
        """Wait `seconds`, watching the socket: True as soon as the client closes it."""
        if seconds <= 0:
            return False
        try:
            data = await asyncio.wait_for(reader.read(1), timeout=seconds)
        except TimeoutError:
            return False
        except ConnectionError:
            return True
        return data == b""

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
        reason = {200: "OK", 404: "Not Found", 500: "Internal Server Error"}[status]
        head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        head += f"content-length: {len(body)}\r\n\r\n"
        writer.write(head.encode() + body)
        await writer.drain()


def _event(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _padded_answer(content: str, size: int, stream: bool) -> Iterator[bytes]:
    """A valid answer whose content ends in `size` spaces (JSON ignores them), in pieces."""
    quoted = json.dumps(content)[:-1].encode()  # the content string, still open
    if stream:
        yield b'data: {"choices":[{"index":0,"delta":{"content":' + quoted
    else:
        yield b'{"choices":[{"index":0,"message":{"role":"assistant","content":' + quoted
    left = size
    while left > 0:
        yield b" " * min(PIECE, left)
        left -= PIECE
    yield b'"}}]}\n\ndata: [DONE]\n\n' if stream else b'"}}]}'


def _gzipped(pieces: Iterator[bytes]) -> Iterator[bytes]:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for piece in pieces:
        packed = packer.compress(piece)
        if packed:
            yield packed
    yield packer.flush()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"
