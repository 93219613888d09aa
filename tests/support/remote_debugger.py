"""A minimal stand-in for the editor's debugger: the other end of `godot --remote-debug tcp://...`.

Godot's remote debugger protocol is a TCP stream of messages, each a little-endian uint32 byte count
followed by one Variant encoded as `var_to_bytes` does (an Array [message, thread id, data Array]).
This decodes the Variant types such a stream carries (and skips a message it cannot decode, since the
byte count says where the next one starts) and encodes the few the test sends.

    with DebuggerEndpoint() as endpoint:
        run_godot(..., f"--remote-debug", endpoint.uri)
        endpoint.messages("npc_mind:npcs")
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Any

# Variant.Type numbers (Godot 4)
NIL, BOOL, INT, FLOAT, STRING = 0, 1, 2, 3, 4
VECTOR2, VECTOR2I, RECT2, RECT2I, VECTOR3, VECTOR3I, TRANSFORM2D, VECTOR4, VECTOR4I = range(5, 14)
PLANE, QUATERNION, AABB, BASIS, TRANSFORM3D, PROJECTION, COLOR = range(14, 21)
STRING_NAME, NODE_PATH, RID, OBJECT, CALLABLE, SIGNAL, DICTIONARY, ARRAY = range(21, 29)
PACKED_BYTE, PACKED_INT32, PACKED_INT64, PACKED_FLOAT32, PACKED_FLOAT64, PACKED_STRING = range(29, 35)
PACKED_VECTOR2, PACKED_VECTOR3, PACKED_COLOR, PACKED_VECTOR4 = range(35, 39)
FLAG_64 = 1 << 16  # 64-bit int/float (and double-precision vectors); for OBJECT: encoded as an id
# floats per value of the fixed-size math types
FLOATS = {VECTOR2: 2, RECT2: 4, VECTOR3: 3, TRANSFORM2D: 6, VECTOR4: 4, PLANE: 4, QUATERNION: 4,
          AABB: 6, BASIS: 9, TRANSFORM3D: 12, PROJECTION: 16, COLOR: 4}  # fmt: skip
INTS = {VECTOR2I: 2, RECT2I: 4, VECTOR3I: 3, VECTOR4I: 4}
PACKED = {PACKED_INT32: "i", PACKED_INT64: "q", PACKED_FLOAT32: "f", PACKED_FLOAT64: "d"}


class DecodeError(ValueError):
    pass


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, count: int) -> bytes:
        if self.at + count > len(self.data):
            raise DecodeError(f"truncated: {count} bytes wanted at {self.at} of {len(self.data)}")
        chunk = self.data[self.at : self.at + count]
        self.at += count
        return chunk

    def unpack(self, fmt: str) -> Any:
        values = struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))
        return values[0] if len(values) == 1 else values

    def string(self) -> str:
        length = self.unpack("I")
        text = self.take(length).decode("utf-8")
        self.take((4 - length % 4) % 4)
        return text

    def container_type(self, bits: int) -> None:
        """The element type of a typed Array or Dictionary (0 none, 1 builtin, 2 class, 3 script)."""
        if bits == 1:
            self.unpack("I")
        elif bits in (2, 3):
            self.string()


def decode(data: bytes) -> Any:
    return _decode(_Reader(data))


def _decode(reader: _Reader) -> Any:
    header = reader.unpack("I")
    kind, flags = header & 0xFF, header >> 16
    wide = bool(flags & 1)
    if kind == NIL:
        return None
    if kind == BOOL:
        return bool(reader.unpack("I"))
    if kind == INT:
        return reader.unpack("q" if wide else "i")
    if kind == FLOAT:
        return reader.unpack("d" if wide else "f")
    if kind in (STRING, STRING_NAME):
        return reader.string()
    if kind in FLOATS:
        return tuple(reader.unpack(("d" if wide else "f") * FLOATS[kind]))
    if kind in INTS:
        return tuple(reader.unpack("i" * INTS[kind]))
    if kind == NODE_PATH:
        count = reader.unpack("I")
        if not count & 0x80000000:
            raise DecodeError("old-format NodePath")
        names, subnames = count & 0x7FFFFFFF, reader.unpack("I")
        absolute = reader.unpack("I") & 1
        parts = [reader.string() for _ in range(names)]
        subs = [reader.string() for _ in range(subnames)]
        return ("/" if absolute else "") + "/".join(parts) + "".join(":" + sub for sub in subs)
    if kind == RID:
        return reader.unpack("Q")
    if kind == OBJECT:
        if wide:
            return {"object_id": reader.unpack("Q")}
        class_name = reader.string()
        if class_name:
            raise DecodeError("full objects are not decoded")
        return None
    if kind in (CALLABLE, SIGNAL):
        raise DecodeError("callables and signals are not decoded")
    if kind == DICTIONARY:
        reader.container_type(flags & 3)
        reader.container_type((flags >> 2) & 3)
        count = reader.unpack("I") & 0x7FFFFFFF
        out = {}
        for _ in range(count):
            key = _decode(reader)
            hashable = isinstance(key, (str, int, float, bool)) or key is None
            out[key if hashable else repr(key)] = _decode(reader)
        return out
    if kind == ARRAY:
        reader.container_type(flags & 3)
        count = reader.unpack("I") & 0x7FFFFFFF
        return [_decode(reader) for _ in range(count)]
    if kind == PACKED_BYTE:
        count = reader.unpack("I")
        data = reader.take(count)
        reader.take((4 - count % 4) % 4)
        return data
    if kind in PACKED:
        count = reader.unpack("I")
        fmt = "<" + PACKED[kind] * count
        return list(struct.unpack(fmt, reader.take(struct.calcsize(fmt))))
    if kind == PACKED_STRING:
        # each element's byte count includes a terminating NUL
        return [reader.string().removesuffix("\0") for _ in range(reader.unpack("I"))]
    if kind in (PACKED_VECTOR2, PACKED_VECTOR3, PACKED_COLOR, PACKED_VECTOR4):
        width = {PACKED_VECTOR2: 2, PACKED_VECTOR3: 3, PACKED_COLOR: 4, PACKED_VECTOR4: 4}[kind]
        count = reader.unpack("I")
        fmt = "<" + ("d" if wide else "f") * width
        return [struct.unpack(fmt, reader.take(struct.calcsize(fmt))) for _ in range(count)]
    raise DecodeError(f"Variant type {kind} is not decoded")


def encode(value: Any) -> bytes:
    """bool, int, float, str, list and dict (str keys) as Variants (what the test sends)."""
    if value is None:
        return struct.pack("<I", NIL)
    if isinstance(value, bool):
        return struct.pack("<II", BOOL, int(value))
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return struct.pack("<Ii", INT, value)
        return struct.pack("<Iq", INT | FLAG_64, value)
    if isinstance(value, float):
        return struct.pack("<Id", FLOAT | FLAG_64, value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return struct.pack("<II", STRING, len(raw)) + raw + b"\0" * ((4 - len(raw) % 4) % 4)
    if isinstance(value, (list, tuple)):
        return struct.pack("<II", ARRAY, len(value)) + b"".join(encode(item) for item in value)
    if isinstance(value, dict):
        body = b"".join(encode(key) + encode(item) for key, item in value.items())
        return struct.pack("<II", DICTIONARY, len(value)) + body
    raise TypeError(f"cannot encode {type(value).__name__}")


class DebuggerEndpoint:
    """Listens on 127.0.0.1 (a free port), accepts one game, and collects its messages in a thread."""

    def __init__(self, continue_breaks: bool = True) -> None:
        """With `continue_breaks`, a break (a script error) is continued at once; without, the game
        stays stopped until the test sends "continue"."""
        self.continue_breaks = continue_breaks
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.uri = f"tcp://127.0.0.1:{self.port}"
        self.received: list[tuple[str, list[Any]]] = []
        self.undecoded = 0
        self.main_thread = 1  # replaced by the id the game's first message carries
        self.connected = threading.Event()
        self._connection: socket.socket | None = None
        self._lock = threading.Lock()
        self._handlers: list[Any] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def __enter__(self) -> DebuggerEndpoint:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def on_message(self, handler: Any) -> None:
        """`handler(endpoint, message, data)` runs (on the reader thread) for every message."""
        self._handlers.append(handler)

    def send(self, message: str, data: list[Any]) -> None:
        """A message to the game's main thread, as the editor sends it: [message, thread id, data]
        (the game drops messages for a thread it does not know; its own messages carry the id)."""
        payload = encode([message, self.main_thread, data])
        with self._lock:
            if self._connection is not None:
                self._connection.sendall(struct.pack("<I", len(payload)) + payload)

    def messages(self, name: str) -> list[list[Any]]:
        return [data for message, data in list(self.received) if message == name]

    def _serve(self) -> None:
        try:
            connection, _ = self._listener.accept()
        except OSError:
            return
        self._connection = connection
        self.connected.set()
        buffer = b""
        while True:
            try:
                chunk = connection.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while len(buffer) >= 4:
                size = struct.unpack_from("<I", buffer)[0]
                if len(buffer) < 4 + size:
                    break
                payload, buffer = buffer[4 : 4 + size], buffer[4 + size :]
                try:
                    message = decode(payload)
                except (DecodeError, UnicodeDecodeError, struct.error):
                    self.undecoded += 1
                    continue
                if isinstance(message, list) and len(message) == 3 and isinstance(message[0], str):
                    if not self.received:
                        self.main_thread = int(message[1])
                    self.received.append((message[0], message[2]))
                    if message[0] == "debug_enter" and self.continue_breaks:  # a script error broke in: go on
                        self.send("continue", [])
                    for handler in self._handlers:
                        handler(self, message[0], message[2])

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
        self._listener.close()
