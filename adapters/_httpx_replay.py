"""An httpx transport that answers with a case's status, headers and reads.

The adapters whose library talks through httpx (openai, LiteLLM, LangChain,
httpx-sse) hand it this transport, so the library's own client reads the
case's bytes read by read, as from a socket.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx


class ReplayBody(httpx.SyncByteStream, httpx.AsyncByteStream):
    def __init__(self, response: Any) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        yield from self._response.iter_bytes()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for data in self._response.aiter_bytes():
            yield data


class ReplayTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Answers the client's one request with the case's status, headers and reads."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        r = self._response
        return httpx.Response(r.status, headers=r.headers, stream=ReplayBody(r), request=request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self.handle_request(request)
