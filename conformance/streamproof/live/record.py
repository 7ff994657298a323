"""``streamproof record``: capture one response of a live endpoint as a case.

The request is one of ``SCENARIOS``; the body is read raw (``iter_raw``,
``Accept-Encoding: identity``) so the saved bytes are the body as sent and
every read is kept in ``chunks.json`` with the time waited for it. Secrets
are masked in place (``streamproof.live.redact``), so every offset stays valid,
and nothing is written while the key sent can still be read out of the case.
The expectation written is the reference parser's reading of the bytes; the
case is ``recorded`` without ``reviewed_by``, so it is listed but never run
until a person has checked it with ``streamproof review``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import accumulate
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..__about__ import __version__
from ..corpus.cases import Case
from ..corpus.schemas import schema_errors
from ..corpus.validate import needed_capabilities
from ..harness.transports import split
from ..reference.reader import read_response
from .redact import SHORTEST, appears, redact_body, redact_headers, redact_text

__all__ = ["SCENARIOS", "Capture", "case_document", "record_main"]


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


_HELLO = _user("Say hello in five words.")
_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        },
    },
}
_PUZZLE = (
    "A bat and a ball cost 1.10 in total. The bat costs 1.00 more than the ball. "
    "How much does the ball cost? Think it through, then answer in one sentence."
)
_STORY = "Write a long story about a lighthouse."
_MUST_CALL = {"tools": [_WEATHER], "tool_choice": "required", "stream": True}
_TWO_CITIES = "What is the weather in Paris and in Tokyo? Call the tool for both cities at once."

# The request body of every scenario, without "model" (``--model`` adds it):
# text: plain streamed text; usage: the same with stream_options.include_usage;
# tool: one function tool the model must call; parallel-tools: a question that
# takes two calls of it in one answer; reasoning: a puzzle that makes reasoning
# models think first (no special parameters); n2: two choices in one stream;
# length: an answer cut by max_tokens; error: an invalid request (no messages);
# non-stream: a non-streamed chat.completion.
SCENARIOS: dict[str, dict[str, Any]] = {
    "text": {"messages": _HELLO, "stream": True},
    "usage": {"messages": _HELLO, "stream": True, "stream_options": {"include_usage": True}},
    "tool": {"messages": _user("What is the weather in Paris?"), **_MUST_CALL},
    "parallel-tools": {"messages": _user(_TWO_CITIES), **_MUST_CALL},
    "reasoning": {"messages": _user(_PUZZLE), "stream": True},
    "n2": {"messages": _HELLO, "n": 2, "stream": True},
    "length": {"messages": _user(_STORY), "max_tokens": 5, "stream": True},
    "error": {"messages": [], "stream": True},
    "non-stream": {"messages": _HELLO, "stream": False},
}

# Per connection, not per response: meaningless in a replay (RFC 9110 §7.6.1).
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"}
    | {"proxy-authenticate", "proxy-authorization", "proxy-connection"}
)
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class RecordError(Exception):
    """Recording failed; ``code`` is the exit status (2: usage, 1: the exchange)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Capture:
    """One exchange as read: status, headers, raw body and its reads."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    sizes: list[int] = field(default_factory=list)
    delays_ms: list[int] = field(default_factory=list)
    ended_by: str | None = None  # the transport error that cut the body short


def record_main(args: argparse.Namespace) -> int:
    """``streamproof record`` with parsed options: 0 recorded, else the error's code."""
    try:
        return _record(args)
    except RecordError as exc:
        print(f"streamproof: {exc}", file=sys.stderr)
        return exc.code


def _record(args: argparse.Namespace) -> int:
    if args.scenario not in SCENARIOS:
        raise RecordError(f"--scenario {args.scenario!r}: choose from {', '.join(SCENARIOS)}")
    if args.timeout <= 0:
        raise RecordError("--timeout must be a positive number of seconds")
    out: Path = args.out
    provider = args.provider or out.parent.name
    if not _NAME.match(out.name) or not _NAME.match(provider):
        raise RecordError(f"--out {out}: provider and slug must be lower-case [a-z0-9-] names")
    if out.parent.parent.name == "cases" and provider != out.parent.name:
        raise RecordError(f"--provider {provider!r} is not the folder's provider")
    if out.exists():
        raise RecordError(f"{out}: already exists; refusing to overwrite a case")
    if not args.base_url.startswith(("http://", "https://")):
        raise RecordError(f"--base-url {args.base_url!r} is not an http(s) URL")
    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise RecordError(f"--api-key-env: ${args.api_key_env} is not set")
    request = {"model": args.model, **SCENARIOS[args.scenario]}
    url = args.base_url.rstrip("/") + "/chat/completions"
    when = datetime.now(timezone.utc)
    got = capture(url, request, api_key=key, timeout=args.timeout)
    secrets = [key] if key else []
    got = _cleaned(got, secrets)
    data = case_document(
        f"{provider}/{out.name}",
        args.scenario,
        request,
        got,
        _host(url),
        when,
        url=redact_text(url, secrets),
    )
    if key:
        _refuse_leaks(key, args.api_key_env, data, got)
    _write(out, data, got)
    reads = f"{len(got.body)} bytes in {len(got.sizes)} reads"
    print(f"recorded {data['id']}: HTTP {got.status}, {reads}, into {out}")
    if got.ended_by:
        print(f"the body ended early: {got.ended_by}")
    print(f"it awaits review: streamproof review {out}")
    return 0


def capture(
    url: str, request: dict[str, Any], *, api_key: str | None = None, timeout: float = 120.0
) -> Capture:
    """POST ``request`` and read the body raw, read by read, with the wait before each."""
    try:
        import httpx
    except ImportError:
        raise RecordError("streamproof record needs httpx: pip install httpx") from None
    headers = {
        "accept": "text/event-stream" if request.get("stream") else "application/json",
        "accept-encoding": "identity",
        "content-type": "application/json",
        "user-agent": f"streamproof/{__version__}",
    }
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    content = json.dumps(request).encode("utf-8")
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream("POST", url, content=content, headers=headers) as response,
        ):
            got = Capture(response.status_code, list(response.headers.multi_items()))
            encoding = response.headers.get("content-encoding", "identity").lower()
            if encoding not in ("identity", ""):
                raise RecordError(
                    f"the server sent a {encoding} body although identity was asked for; "
                    "its bytes are not the body a parser reads",
                    1,
                )
            _read(response, got)
    except httpx.HTTPError as exc:
        raise RecordError(f"{url}: {type(exc).__name__}: {exc}", 1) from None
    return got


def _read(response: Any, got: Capture) -> None:
    import httpx

    body = bytearray()
    last = time.perf_counter()
    reads = response.iter_raw()
    while True:
        try:
            data = next(reads)
        except StopIteration:
            break
        except httpx.TransportError as exc:
            got.ended_by = f"{type(exc).__name__}: {exc}"
            break
        if not data:
            continue  # an empty read is no read; its wait counts toward the next
        now = time.perf_counter()
        got.sizes.append(len(data))
        got.delays_ms.append(round((now - last) * 1000))
        last = now
        body += data
    got.body = bytes(body)


def _cleaned(got: Capture, secrets: list[str]) -> Capture:
    """Hop-by-hop headers dropped; secrets masked in headers and body, lengths kept."""
    kept = [(k, v) for k, v in got.headers if k.lower() not in _HOP_BY_HOP]
    headers = list(redact_headers(kept, secrets).items())
    body = redact_body(got.body, secrets)
    ended_by = got.ended_by and redact_text(got.ended_by, secrets)
    return Capture(got.status, headers, body, got.sizes, got.delays_ms, ended_by)


def _refuse_leaks(key: str, variable: str, data: dict[str, Any], got: Capture) -> None:
    """Refuse a case out of which the key can still be read, in any form.

    A key of ``SHORTEST`` bytes or more has been masked wherever redaction
    finds it; this catches what it cannot mask (a key joined from the deltas
    of two interleaved choices). A shorter key is never masked, since it
    would mask words: the recording is refused when the response holds it,
    and kept as it is when not (``EMPTY``, ``ollama``).
    """
    short = len(key.encode("utf-8")) < SHORTEST
    said = {k: data[k] for k in ("response", "expected")} if short else data
    text = json.dumps(said, ensure_ascii=False).encode("utf-8")
    names = " ".join(data["response"]["headers"]).encode("utf-8")
    places = [
        (data["response"]["body"], got.body, key),
        ("case.json", text, key),
        ("case.json", names, key.lower()),  # header names are lower-cased
    ]
    place = next((place for place, blob, value in places if appears(blob, value)), None)
    if place is not None and short:
        raise RecordError(
            f"--api-key-env: ${variable} is under {SHORTEST} bytes, too short to mask "
            f"safely, and the response holds it ({place}); nothing written"
        )
    if place is not None:
        raise RecordError(
            f"${variable}'s key would be written in {place} in a form redaction cannot mask; "
            "nothing written"
        )


def case_document(
    case_id: str,
    scenario: str,
    request: dict[str, Any],
    got: Capture,
    endpoint: str,
    recorded_at: datetime,
    *,
    url: str | None = None,
) -> dict[str, Any]:
    """The case.json of a recording: the reference parser's reading, awaiting review.

    Its evidence is the capture itself (docs/evidence.md), named by the URL it
    was captured from; the reading is the lossless one the review confirms.
    """
    headers = dict(got.headers)
    reads = split(got.body, list(accumulate(got.sizes)))
    outcome = read_response(got.status, headers, request, reads)
    name = _body_name(got.status, headers, request)
    stamp = recorded_at.astimezone(timezone.utc).isoformat(timespec="seconds")
    stamp = stamp.replace("+00:00", "Z")
    comment = (
        f"Recorded by streamproof record from {endpoint} on {stamp} with scenario {scenario}. "
        "The expectation is the reference parser's reading of these bytes and awaits a "
        f"person's field-by-field review (streamproof review {case_id}); until then the "
        "case is listed but never run."
    )
    if got.ended_by:
        comment += f" The connection ended with {got.ended_by}."
    data: dict[str, Any] = {
        "id": case_id,
        "title": f"recorded {scenario} scenario, awaiting review",
        "comment": comment,
        "provider": case_id.split("/", 1)[0],
        "model": outcome.get("model") or request.get("model"),
        "provenance": {
            "kind": "recorded",
            "source": f"recorded by streamproof {__version__} with scenario {scenario}",
            "observed": stamp[:10],
            "recorded_at": stamp,
            "endpoint": endpoint,
        },
        "evidence": {
            "shape": [
                {
                    "kind": "capture",
                    "url": url or f"https://{endpoint}/",
                    "note": f"these bytes, captured by streamproof record on {stamp}",
                }
            ],
            "reading": {"basis": "lossless", "section": "semantics §12"},
        },
        "request": request,
        "response": {"status": got.status, "headers": headers, "body": name},
        "requires": [],
        "severity": "should",
        "tags": [],
        "spec": _spec(outcome, got.status, name),
        "expected": expectation(outcome, stated_usage="stream_options" in request),
    }
    case = Case(case_id, Path(case_id), data, got.body)
    data["requires"] = sorted(needed_capabilities(case))
    return data


def expectation(outcome: dict[str, Any], *, stated_usage: bool = False) -> dict[str, Any]:
    """What an outcome states: status, each choice's fields that are set, usage, error."""
    want: dict[str, Any] = {"status": outcome["status"]}
    choices = []
    for choice in outcome.get("choices") or []:
        kept = {"index": choice["index"]}
        for key in ("role", "content", "reasoning", "refusal", "finish_reason", "tool_calls"):
            if choice.get(key) not in (None, "", []):
                kept[key] = choice[key]
        choices.append(kept)
    if choices or outcome["status"] != "error":
        want["choices"] = choices
    if outcome.get("usage") is not None or stated_usage:
        want["usage"] = outcome.get("usage")
    error = outcome.get("error")
    if isinstance(error, dict):
        want["error"] = {k: v for k, v in error.items() if v is not None}
    return want


def _spec(outcome: dict[str, Any], status: int, name: str) -> list[str]:
    """The sections of docs/semantics.md that say what this response means."""
    if status >= 400:
        return ["semantics §8.5" if name == "response.json" else "semantics §8.6"]
    choices = outcome.get("choices") or []
    sections = {
        "9": name == "response.json",
        {"complete": "5.2", "truncated": "5.3"}.get(outcome["status"], "5.1"): True,
        "6.1": len(choices) > 1,
        "6.6": any(c.get("reasoning") for c in choices),
        "6.7": any(c.get("tool_calls") for c in choices),
        "7.1": outcome.get("usage") is not None,
    }
    return [f"semantics §{section}" for section, present in sections.items() if present]


def _body_name(status: int, headers: dict[str, str], request: dict[str, Any]) -> str:
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media == "text/event-stream":
        return "response.sse"
    if media == "application/json" or media.endswith("+json"):
        return "response.json"
    if not media and status < 400:
        return "response.sse" if request.get("stream") is True else "response.json"
    return "response.body"


def _host(url: str) -> str:
    return urlsplit(url).hostname or url


def _write(out: Path, data: dict[str, Any], got: Capture) -> None:
    problem = schema_errors("case", data)
    if problem:
        raise RecordError(f"the recorded case does not fit the case schema: {problem}", 1)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.mkdir()
        (out / data["response"]["body"]).write_bytes(got.body)
        if got.sizes:
            chunks = {"sizes": got.sizes, "delays_ms": got.delays_ms}
            (out / "chunks.json").write_bytes(
                (json.dumps(chunks, allow_nan=False) + "\n").encode("utf-8")
            )
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        (out / "case.json").write_bytes(text.encode("utf-8"))
    except FileExistsError:
        raise RecordError(f"{out}: already exists; refusing to overwrite a case") from None
    except OSError as exc:
        raise RecordError(f"{exc.filename or out}: {exc.strerror or exc}", 1) from None
