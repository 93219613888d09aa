"""Response bodies read within caps: what a hostile or broken endpoint can make the game hold.

`BoundedBody` decodes a body (identity, gzip or deflate) as it arrives and stops at a cap on the
wire and one after decompression (`too_large`); `read_capped` reads a whole (small) answer through
it. The completions path and the start-up requests (`/props`, `/tokenize`) both read through them.
"""

from __future__ import annotations

import zlib

import httpx

from npc_mind.llm.errors import InvalidAnswerError

#: The encodings `BoundedBody` decodes within its caps: the only ones a request asks for.
ACCEPT_ENCODING = {"Accept-Encoding": "gzip, deflate"}


class BoundedBody:
    """A response body decoded (identity, gzip or deflate) within two caps: `max_bytes` read from the
    wire and `max_decoded` after decompression, so a huge body or a compression bomb costs at most the
    caps (zlib is asked for no more than what is left of them) and ends as `too_large`."""

    def __init__(self, encoding: str, max_bytes: int, max_decoded: int) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._zlib = None
        elif encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
        else:
            raise InvalidAnswerError(f"unsupported content-encoding {encoding[:32]!r}", "invalid_answer")
        self._max_bytes = max_bytes
        self._left = max_decoded
        self.read = 0

    def feed(self, raw: bytes) -> bytes:
        self.read += len(raw)
        if self.read > self._max_bytes:
            raise InvalidAnswerError(f"the response is over {self._max_bytes} bytes", "too_large")
        if self._zlib is None:
            data = raw
        else:
            try:
                data = self._zlib.decompress(raw, self._left + 1)
            except zlib.error:
                raise InvalidAnswerError("the response body does not decompress", "invalid_answer") from None
        self._left -= len(data)
        if self._left < 0:
            raise InvalidAnswerError("the response decompresses to over the cap", "too_large")
        return data


async def read_capped(response: httpx.Response, max_bytes: int, max_decoded: int) -> bytes:
    """The whole body of a streamed `response`, decoded within the caps (`too_large` past them)."""
    reader = BoundedBody(response.headers.get("content-encoding", ""), max_bytes, max_decoded)
    return b"".join([reader.feed(raw) async for raw in response.aiter_raw()])
