"""``streamproof serve``: the corpus over real HTTP, for unmodified applications.

An OpenAI client needs only ``base_url="http://127.0.0.1:PORT/v1"`` and
``model="streamproof:<case-id>"`` (or ``"streamproof:<case-id>@<transport>"``);
``POST /cases/<provider>/<slug>/<transport>/v1/chat/completions`` names both
in the path, and ``GET /v1/models`` lists the cases. Anything else is a 404
(a 405 for a known path and the wrong method) with an OpenAI-style error.
Cases are looked up by id in the loaded corpus: no path can reach a file.

On the wire go the case's status and headers as written (no charset, no
``Date`` or ``Server`` unless the case has them) and one framing header:
``Transfer-Encoding: chunked`` for streams, so each read of the transport is
one HTTP chunk, ``Content-Length`` for other bodies, still written read by
read. The head goes out at once; ``first_byte_delay`` waits before the first
read, ``chunk_delay`` before each later one, the ``recorded`` transport adds
the ``delays_ms`` of ``chunks.json``, all times ``delay_scale``. With
``keepalive``, ``: keep-alive`` comments fill idle time, only where a read
boundary is also an event boundary, so no event changes. A case expected
``truncated`` ends with the connection closed after its last read, without
the terminating chunk, as on a dropped connection. A ``wire/`` case's fault
(a reset, a cut chunked body, a short body) is written by ``live.faults``.

Why aiohttp (3.9 or newer): the criterion is control of the flush per read
and of an abrupt close. ``StreamResponse.prepare()`` sends the head at once
and each ``write()`` hands one chunk straight to the asyncio transport
(``TCP_NODELAY`` on, no buffering of its own below 64 KiB); given headers are
kept verbatim and its own additions can be removed in the public
``on_response_prepare`` signal; ``request.transport`` is the connection, so a
cut is ``transport.close()`` after the last write, and aiohttp treats the
refused final chunk as a client that left, quietly. ``AppRunner`` and
``SockSite`` run in our own thread without signal handlers. Starlette on
uvicorn flushes each ``StreamingResponse`` piece too, but ASGI has no message
for "close without finishing": the app must return or raise before the last
body message, which uvicorn logs as an application error before closing;
Starlette appends a charset to ``text/*`` media types, uvicorn adds ``date``
and ``server`` unless told not to, and running it in a thread means working
around its signal handling: two dependencies, less control. Hypercorn is
ASGI over h11, with the same indirection. aiohttp is one typed dependency
(LiteLLM already pulls it in) and brings the client the load test uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..corpus.cases import Case, Corpus
from ..corpus.gate import read_chunks
from ..harness.transports import DEFAULT_SEED, TRANSPORTS, boundaries, split
from ..reference.reader import body_kind
from ..reporting.wire import terminal_safe
from .faults import replay_fault

if TYPE_CHECKING:  # aiohttp is imported when a server starts, not with the command line
    from aiohttp import web
    from aiohttp.web_protocol import RequestHandler

__all__ = ["MODEL_PREFIX", "ReplayServer", "event_boundaries", "is_stream"]

MODEL_PREFIX = "streamproof:"
KEEPALIVE_COMMENT = b": keep-alive"
# The case's framing headers would contradict ours; aiohttp's own additions are
# removed again unless the case has them.
_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})
_ADDED = ("date", "server", "content-type")
_ROUTES = (
    f"POST /v1/chat/completions with model '{MODEL_PREFIX}<case-id>[@<transport>]', "
    "POST /cases/<provider>/<slug>/<transport>/v1/chat/completions, GET /v1/models"
)
_ENDPOINTS = {"/v1/chat/completions": "POST", "/v1/models": "GET"}
_CASE_PATH = re.compile(r"/cases/([a-z0-9-]+)/([a-z0-9-]+)/([a-z]+)(/v1/[a-z/]+)")
_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n)")
_FIELD_START = (b"data", b"event", b"id", b"retry", b":")
# One line per refused request on stderr, never a traceback: the client's
# mistake is not the server's failure.
_LOG = logging.getLogger("streamproof.serve")
_REASONS = {400: "bad_request", 413: "request_too_large", 500: "server_error"}


def event_boundaries(body: bytes) -> dict[int, bytes]:
    """Offsets of ``body`` between two events, each with the line end used there.

    An offset is the end of a blank line (a CR followed by LF counts as one
    line end, so an offset never falls between them), or 0 when the body
    starts with a field or comment line (not a byte order mark). An SSE
    comment inserted at such an offset changes no event.
    """
    lines = list(_LINE.finditer(body))
    points = {line.end(): line.group(2) for line in lines if not line.group(1)}
    if lines and body.startswith(_FIELD_START):
        points[0] = lines[0].group(2)
    return points


def _error(status: int, code: str, message: str, *, allow: str | None = None) -> web.Response:
    from aiohttp import web

    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    headers = {"Allow": allow} if allow else None
    return web.json_response({"error": error}, status=status, headers=headers)


def _error_body(status: int, message: str) -> bytes:
    """An OpenAI-style error document (API reference, "Error codes")."""
    error = {
        "message": message,
        "type": "invalid_request_error" if status < 500 else "server_error",
        "param": None,
        "code": _REASONS.get(status, "error"),
    }
    return json.dumps({"error": error}).encode("utf-8")


def _json_errors(server: object) -> None:
    """Make ``server`` (an aiohttp ``web.Server``) answer what aiohttp refuses
    before any route runs (a request line or header it cannot parse, a handler
    that raised) with an OpenAI-style JSON error and a one-line log.

    aiohttp builds those answers in ``RequestHandler.handle_error``; the
    handler class is chosen by ``Server.__call__``, so both get a subclass
    that adds no state (class assignment needs an identical layout).
    """
    from aiohttp import web
    from aiohttp.web_protocol import RequestHandler

    class JsonErrorHandler(RequestHandler):
        __slots__ = ()

        def handle_error(
            self,
            request: web.BaseRequest,
            status: int = 500,
            exc: BaseException | None = None,
            message: str | None = None,
        ) -> web.StreamResponse:
            reason = f"{type(exc).__name__}: {exc}" if exc is not None else message or ""
            line = terminal_safe(" ".join(reason.split())[:300])
            _LOG.warning("serve: %s from %s: %s", status, request.remote, line)
            if request.writer.output_size > 0:  # the head went out: only a cut is left
                raise ConnectionError("the response had started; the connection is cut")
            text = f"the request could not be read: {line}" if status < 500 else "server error"
            response = web.Response(
                status=status, body=_error_body(status, text), content_type="application/json"
            )
            response.force_close()
            return response

    class JsonErrorServer(type(server)):  # type: ignore[misc]
        def __call__(self) -> RequestHandler:
            handler: RequestHandler = super().__call__()
            handler.__class__ = JsonErrorHandler
            return handler

    server.__class__ = JsonErrorServer


def _models(corpus: Corpus) -> web.Response:
    from aiohttp import web

    model = {"object": "model", "created": 0, "owned_by": "streamproof"}
    data = [{"id": f"{MODEL_PREFIX}{case.id}", **model} for case in corpus.cases]
    return web.json_response({"object": "list", "data": data})


#: A response expected to take longer than this is announced as slow in the log.
SLOW_SECONDS = 30.0


def pace_line(
    method: str, path: str, case: Case, transport: str, size: int, delays: list[float]
) -> str:
    """The log line of one response: what is replayed, in how many reads, for how long."""
    seconds = sum(delays)
    reads = len(delays)
    line = (
        f"{method} {path[:120]} -> {case.id} [{transport}] HTTP {case.status}: "
        f"{size} bytes in {reads} read{'' if reads == 1 else 's'}, about {seconds:.1f} s"
    )
    if seconds > SLOW_SECONDS:
        per_read = seconds / reads if reads else 0.0
        line += (
            f" (slow: {per_read * 1000:.0f} ms before each of {reads} reads; "
            "lower --chunk-delay or --delay-scale, or choose a transport with fewer reads)"
        )
    return line


def _is_truncated(case: Case) -> bool:
    return any(alt.get("status") == "truncated" for alt in case.alternatives)


def is_stream(case: Case) -> bool:
    return body_kind(case.status, case.headers, case.request) == "stream"


class ReplayServer:
    """Serves a corpus from a background thread with its own event loop."""

    def __init__(
        self,
        corpus: Corpus,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        transport: str = "whole",
        seed: int = DEFAULT_SEED,
        chunk_delay: float = 0.0,
        first_byte_delay: float = 0.0,
        delay_scale: float = 1.0,
        keepalive: float | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if transport not in TRANSPORTS:
            raise ValueError(f"unknown transport {transport!r}; choose from {TRANSPORTS}")
        if min(chunk_delay, first_byte_delay, delay_scale) < 0:
            raise ValueError("delays and delay_scale must not be negative")
        if keepalive is not None and keepalive <= 0:
            raise ValueError("keepalive must be a positive number of seconds")
        self.corpus = corpus
        self.host, self.port, self.transport, self.seed = host, port, transport, seed
        self.chunk_delay, self.first_byte_delay = chunk_delay, first_byte_delay
        self.delay_scale, self.keepalive = delay_scale, keepalive
        self.log = log or _LOG.info  # one line per response: case, transport, pace
        self._cases = {case.id: case for case in corpus.cases}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._base_url: str | None = None
        self._response_type: type[web.StreamResponse] | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> str:
        """Bind, serve from a background thread and return the base URL."""
        with self._lock:
            if self._thread is not None or self._base_url is not None:
                raise RuntimeError("a ReplayServer starts only once")
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            sock = socket.create_server((self.host, self.port), family=family, backlog=1024)
            port = sock.getsockname()[1]
            host = f"[{self.host}]" if family == socket.AF_INET6 else self.host
            ready = threading.Event()
            self._thread = threading.Thread(
                target=self._run, args=(sock, ready), name=f"streamproof-serve-{port}", daemon=True
            )
            self._thread.start()
            ready.wait()
            if self._failure is not None:
                self._thread.join()
                raise RuntimeError(f"the replay server did not start: {self._failure}")
            self._base_url = f"http://{host}:{port}"
            return self._base_url

    def stop(self) -> None:
        """Stop serving (open streams are cut) and join the thread; idempotent."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is None:
            return
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stopping.set)
        thread.join()

    def __enter__(self) -> ReplayServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("the replay server is not started")
        return self._base_url

    def case_base_url(self, case_id: str, transport: str) -> str:
        """The base URL an OpenAI client uses to get this case under this transport."""
        return f"{self.base_url}/cases/{case_id}/{transport}/v1"

    def _run(self, sock: socket.socket, ready: threading.Event) -> None:
        try:
            asyncio.run(self._serve(sock, ready))
        except BaseException as exc:  # reported by start(); the thread must not die loudly
            self._failure = exc
        finally:
            sock.close()
            ready.set()

    async def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        from aiohttp import web

        class ReplayResponse(web.StreamResponse):
            def __init__(self, status: int, headers: dict[str, str]) -> None:
                super().__init__(status=status, headers=headers)
                self.case_header_names = frozenset(name.lower() for name in headers)

        async def exact_headers(request: web.Request, response: web.StreamResponse) -> None:
            # Runs after aiohttp added its headers, before they are sent.
            if isinstance(response, ReplayResponse):
                for name in _ADDED:
                    if name not in response.case_header_names:
                        response.headers.popall(name, None)

        self._response_type = ReplayResponse
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        app.on_response_prepare.append(exact_headers)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await runner.setup()
        _json_errors(runner.server)
        try:
            await web.SockSite(runner, sock, backlog=1024).start()
            self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
            ready.set()
            await self._stopping.wait()
        finally:
            await runner.cleanup()

    # -- routing -----------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        # The raw path as sent: aiohttp's normalised one would resolve "..".
        path = request.raw_path.split("?", 1)[0]
        match = _CASE_PATH.fullmatch(path)
        endpoint = match.group(4) if match else path
        method = _ENDPOINTS.get(endpoint)
        if method is None:
            what = "is not a case path" if path.startswith("/cases/") else "is no route"
            return _error(404, "not_found", f"{path[:200]!r} {what}; the routes: {_ROUTES}")
        if request.method != method:
            message = f"{endpoint} takes {method}, not {request.method}"
            return _error(405, "method_not_allowed", message, allow=method)
        if match:
            found = self._lookup(f"{match.group(1)}/{match.group(2)}", match.group(3))
        elif endpoint == "/v1/chat/completions":
            found = await self._from_model(request)
        else:
            return _models(self.corpus)
        if not isinstance(found, tuple):
            return found
        if endpoint == "/v1/models":
            return _models(self.corpus)
        return await self._replay(request, *found)

    async def _from_model(self, request: web.Request) -> tuple[Case, str] | web.Response:
        from aiohttp import web

        try:
            payload = json.loads(await request.read())
        except web.HTTPRequestEntityTooLarge:
            message = f"the request body is over {request.client_max_size} bytes"
            _LOG.warning("serve: 413 from %s: %s", request.remote, message)
            return _error(413, "request_too_large", message)
        except (ValueError, RecursionError):
            return _error(400, "invalid_json", "the request body is not JSON")
        model = payload.get("model") if isinstance(payload, dict) else None
        if not isinstance(model, str):
            return _error(400, "missing_model", f"no model; the routes: {_ROUTES}")
        if not model.startswith(MODEL_PREFIX):
            message = f"model {model[:200]!r} is not a streamproof case; the routes: {_ROUTES}"
            return _error(404, "model_not_found", message)
        case_id, _, transport = model[len(MODEL_PREFIX) :].partition("@")
        return self._lookup(case_id, transport or self.transport)

    def _lookup(self, case_id: str, transport: str) -> tuple[Case, str] | web.Response:
        case = self._cases.get(case_id)
        if case is None:
            listed = f"GET /v1/models lists its {len(self._cases)} cases"
            message = f"no case {case_id[:200]!r} in corpus {self.corpus.version} ({listed})"
            return _error(404, "model_not_found", message)
        if transport not in TRANSPORTS or (transport == "recorded" and not case.has_chunks):
            known = [t for t in TRANSPORTS if t != "recorded" or case.has_chunks]
            message = f"no transport {transport[:50]!r} for {case_id!r}; it has {', '.join(known)}"
            return _error(404, "transport_not_found", message)
        return case, transport

    # -- replay ------------------------------------------------------------

    def _delays(self, case: Case, transport: str, count: int) -> list[float]:
        """Seconds to wait before each read."""
        recorded = [0.0] * count
        if transport == "recorded":
            # Read through the corpus gate; load_corpus checked the delays.
            delays_ms = read_chunks(case.dir / "chunks.json").get("delays_ms")
            if isinstance(delays_ms, list) and len(delays_ms) == count:
                recorded = [max(0.0, float(ms)) / 1000 for ms in delays_ms]
        return [
            (recorded[i] + (self.first_byte_delay if i == 0 else self.chunk_delay))
            * self.delay_scale
            for i in range(count)
        ]

    async def _replay(self, request: web.Request, case: Case, transport: str) -> web.StreamResponse:
        body = case.body
        reads = split(body, boundaries(body, transport, seed=self.seed, case_dir=case.dir))
        delays = self._delays(case, transport, len(reads))
        self.log(pace_line(request.method, request.path, case, transport, len(body), delays))
        stream = is_stream(case)
        if case.fault is not None:  # written by hand: aiohttp finishes what it starts
            return await replay_fault(request, case, reads, delays, stream)
        truncated = _is_truncated(case)
        headers = {k: v for k, v in case.headers.items() if k.lower() not in _FRAMING}
        assert self._response_type is not None
        response = self._response_type(status=case.status, headers=headers)
        if not stream and not truncated:
            response.content_length = len(body)
        points = event_boundaries(body) if stream and self.keepalive else {}
        try:
            await response.prepare(request)
            offset = 0
            for data, delay in zip(reads, delays, strict=True):
                await self._idle(response, delay, points.get(offset))
                await response.write(data)
                offset += len(data)
        except ConnectionError:  # the client went away
            return response
        if truncated and request.transport is not None:
            # Flushes what was written, then FIN: the terminating chunk never comes.
            request.transport.close()
        return response

    async def _idle(
        self, response: web.StreamResponse, delay: float, line_end: bytes | None
    ) -> None:
        """Wait ``delay`` seconds, with keep-alive comments when ``line_end`` allows them."""
        if self.keepalive is not None and line_end is not None:
            comment = KEEPALIVE_COMMENT + line_end + line_end
            while delay > self.keepalive:
                await asyncio.sleep(self.keepalive)
                await response.write(comment)
                delay -= self.keepalive
        if delay > 0:
            await asyncio.sleep(delay)
