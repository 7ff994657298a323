"""The faults of ``wire/`` cases, produced on the real socket by ``serve``.

A case with a ``fault`` (``schemas/case.schema.json``; docs/semantics.md §5.4) is a
response that breaks the connection after ``after_byte`` bytes of its body
file. aiohttp finishes every response it starts (a terminating chunk, a
``Content-Length`` it keeps), so these responses are written here, by hand,
on the connection's transport, and aiohttp's own response is never sent:

- ``reset``: the body under its usual framing (chunked for a stream,
  ``Content-Length`` otherwise), then a TCP reset. ``SO_LINGER`` with a zero
  timeout makes ``close()`` send RST instead of FIN (POSIX ``setsockopt``,
  Linux ``socket(7)``). A reset also discards what the kernel has not sent
  yet, so the reset waits until the peer has acknowledged every byte
  (``TIOCOUTQ`` is 0), for at most ``DRAIN_SECONDS``.
- ``chunked-cut``: ``Transfer-Encoding: chunked`` and ``Connection: close``,
  then FIN without the terminating ``0\\r\\n\\r\\n`` (RFC 9112 §7.1: the
  message is incomplete).
- ``short-content-length``: ``Content-Length`` of the whole body file and
  ``Connection: close``, then FIN after fewer bytes (RFC 9112 §6.3: an
  incomplete message).

Each read of the transport keeps its pace; a read that crosses
``after_byte`` is cut there. Keep-alive comments are not inserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from ..corpus.cases import Case

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["DRAIN_SECONDS", "FAULT_KINDS", "fault_head", "fault_pieces", "replay_fault"]

FAULT_KINDS = ("reset", "chunked-cut", "short-content-length")
#: How long a reset waits for the peer to acknowledge what was sent: a client
#: that stops reading would otherwise hold the reset back for ever.
DRAIN_SECONDS = 5.0
_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})


def _chunked(case: Case, stream: bool) -> bool:
    kind = _kind(case)
    return kind == "chunked-cut" or (kind == "reset" and stream)


def _kind(case: Case) -> str:
    fault = case.fault
    assert fault is not None
    return str(fault["kind"])


def fault_head(case: Case, stream: bool) -> bytes:
    """The status line and headers: the case's own, then the fault's framing."""
    try:
        reason = HTTPStatus(case.status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {case.status} {reason}"]
    lines += [f"{k}: {v}" for k, v in case.headers.items() if k.lower() not in _FRAMING]
    if _chunked(case, stream):
        lines.append("transfer-encoding: chunked")
    else:
        lines.append(f"content-length: {len(case.body)}")
    if _kind(case) != "reset":
        lines.append("connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def fault_pieces(
    case: Case, reads: Sequence[bytes], delays: Sequence[float], stream: bool
) -> list[tuple[bytes, float]]:
    """What goes on the wire after the head, read by read, each with its delay:
    the reads cut at ``after_byte``, framed as HTTP chunks when chunked."""
    fault = case.fault
    assert fault is not None
    left = min(int(fault["after_byte"]), len(case.body))
    chunked = _chunked(case, stream)
    pieces = []
    for data, delay in zip(reads, delays, strict=True):
        data = data[:left]
        left -= len(data)
        if data:  # an empty HTTP chunk would be the terminating one
            framed = b"%x\r\n%s\r\n" % (len(data), data) if chunked else data
            pieces.append((framed, delay))
        if left == 0:
            break
    return pieces


async def replay_fault(
    request: web.Request,
    case: Case,
    reads: Sequence[bytes],
    delays: Sequence[float],
    stream: bool,
) -> web.StreamResponse:
    """Write the fault response on ``request``'s transport, then break the connection.

    The returned response is never sent: aiohttp finds the transport closing
    and treats it as a client that left.
    """
    from aiohttp import web

    # The whole request first, as a real server would before answering: a
    # client still writing its body when the reset comes would fail on the
    # write and never read the response (aiohttp caps the size: a 413).
    with contextlib.suppress(web.HTTPRequestEntityTooLarge):
        await request.read()
    transport = request.transport
    if transport is None or transport.is_closing():
        return web.StreamResponse()
    transport.write(fault_head(case, stream))
    for data, delay in fault_pieces(case, reads, delays, stream):
        if delay > 0:
            await asyncio.sleep(delay)
        if transport.is_closing():  # the client left
            return web.StreamResponse()
        transport.write(data)
    if _kind(case) == "reset":
        await _reset(transport)
    else:
        transport.close()  # flushes what was written, then FIN
    return web.StreamResponse()


async def _reset(transport: Any) -> None:
    """RST once the peer holds every byte written (or ``DRAIN_SECONDS`` passed)."""
    deadline = time.monotonic() + DRAIN_SECONDS
    sock: socket.socket | None = transport.get_extra_info("socket")
    while time.monotonic() < deadline and not transport.is_closing():
        if transport.get_write_buffer_size() == 0 and _unacknowledged(sock) == 0:
            break
        await asyncio.sleep(0.002)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _unacknowledged(sock: socket.socket | None) -> int:
    """Bytes the kernel holds unsent or unacknowledged; 0 where it cannot say."""
    if sock is None:
        return 0
    try:
        import fcntl
        import termios

        buffer = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        return int(struct.unpack("i", buffer)[0])
    except (ImportError, AttributeError, OSError):
        return 0
