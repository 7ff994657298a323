"""Drawing abstract responses from a seeded ``random.Random``.

Only what the adapter can be judged on is drawn: a structural capability it
lacks (``multiple_choices``, ``stream_error``, ``http_error``,
``truncation``, ``non_streaming``) is never needed by a drawn response.
"""

from __future__ import annotations

import random
from dataclasses import replace

from .model import AudioDelta, CallDelta, Chunk, Delta, Done, Event, Response, StreamError, Usage
from .render import FRAMING, JSON_SHAPES, LINE_ENDS

__all__ = ["draw"]

# Text that stresses JSON escapes, line ends inside strings and multi-byte UTF-8.
ALPHABET = 'aaaabcdeeefghijklmnooprsttu     .,!?"\\/\n\t{}[]:é中😀'
FINISH = ("stop", "stop", "length", "content_filter")
HTTP = (400, 401, 404, 429, 500, 502, 503)
# Error messages are plain prose, as providers write them: a parser that
# shows the raw error body as its message still contains them (§8.5), so a
# JSON escape in the message would report a convention, not a defect.
MESSAGE = "abcdefghijklmnopqrstuvwxyz    .,'-:0123456789"


def _text(rng: random.Random, most: int = 12, alphabet: str = ALPHABET) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, most)))


def draw(rng: random.Random, capabilities: frozenset[str]) -> Response:
    """One response an adapter with ``capabilities`` can be judged on."""
    roll = rng.random()
    if roll < 0.08 and "http_error" in capabilities:
        return _http_error(rng)
    if roll < 0.18 and "non_streaming" in capabilities:
        return _completion(rng, capabilities)
    return _stream(rng, capabilities)


def _http_error(rng: random.Random) -> Response:
    error = StreamError(
        _text(rng, 20, MESSAGE),
        rng.choice(("", "invalid_request_error", "server_error")),
        rng.choice(("", "rate_limited")),
    )
    status = rng.choice(HTTP)
    return Response(
        "http-error", status=status, error=error, html=status == 502 and rng.random() < 0.5
    )


def _choice_plan(rng: random.Random, index: int, capabilities: frozenset[str]) -> list[Delta]:
    """The deltas of one choice, in order, the last one finishing it."""
    deltas: list[Delta] = []
    if "reasoning" in capabilities and rng.random() < 0.3:
        deltas += [Delta(index, reasoning=_text(rng)) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.85:
        scored = "logprobs" in capabilities and rng.random() < 0.3
        for _ in range(rng.randint(1, 6)):
            text = _text(rng)
            deltas.append(Delta(index, content=text, logprobs=(text,) if scored else ()))
    if "refusal" in capabilities and rng.random() < 0.1:
        deltas += [Delta(index, refusal=_text(rng)) for _ in range(rng.randint(1, 2))]
    deltas += _part_deltas(rng, index, capabilities)
    calls = rng.randint(1, 3) if _calls_drawn(capabilities) and rng.random() < 0.3 else 0
    deltas += _tool_call_deltas(rng, index, calls, _custom_share(capabilities))
    finish = "tool_calls" if calls and rng.random() < 0.8 else rng.choice(FINISH)
    if not deltas or rng.random() < 0.4:
        deltas.append(Delta(index, finish_reason=finish))
    else:
        deltas[-1] = replace(deltas[-1], finish_reason=finish)
    return deltas


def _calls_drawn(capabilities: frozenset[str]) -> bool:
    return bool({"tool_calls", "custom_tool_calls"} & capabilities)


def _custom_share(capabilities: frozenset[str]) -> float:
    """How many calls are custom ones: all of them without ``tool_calls``."""
    if "custom_tool_calls" not in capabilities:
        return 0.0
    return 0.4 if "tool_calls" in capabilities else 1.0


def _part_deltas(rng: random.Random, index: int, capabilities: frozenset[str]) -> list[Delta]:
    """A legacy function call, audio and annotations (§6.8, §6.11, §6.12), when claimed."""
    deltas: list[Delta] = []
    if "annotations" in capabilities and rng.random() < 0.15:
        urls = [f"https://example.org/{rng.randint(0, 999)}" for _ in range(rng.randint(1, 3))]
        deltas += [Delta(index, annotations=(url,)) for url in urls]
    if "audio" in capabilities and rng.random() < 0.15:
        pieces = [rng.randbytes(3 * rng.randint(0, 4)) for _ in range(rng.randint(1, 3))]
        deltas += [
            Delta(index, audio=AudioDelta(f"audio_{index}" if n == 0 else "", p, _text(rng, 6)))
            for n, p in enumerate(pieces)
        ]
        if rng.random() < 0.5:
            deltas.append(Delta(index, audio=AudioDelta(expires_at=rng.randint(1, 2**31))))
    if "function_call" in capabilities and rng.random() < 0.15:
        deltas.append(Delta(index, function_call=(rng.choice(("get", "f")), "")))
        arguments = [_text(rng, 6) for _ in range(rng.randint(0, 3))]
        deltas += [Delta(index, function_call=("", a)) for a in arguments]
    return deltas


def _tool_call_deltas(
    rng: random.Random, choice: int, calls: int, custom: float = 0.0
) -> list[Delta]:
    """Heads and argument fragments of ``calls`` calls, interleaved at random,
    sometimes several calls in one delta; a share ``custom`` of them custom."""
    kinds = [rng.random() < custom for _ in range(calls)]
    pending = [
        [
            CallDelta(
                i,
                id=f"call_{i}{rng.randint(0, 999)}",
                name=rng.choice(("get", "f", "look_up")),
                arguments=rng.choice(("", "{")),
                head=True,
                custom=kinds[i],
            )
        ]
        + [CallDelta(i, arguments=_text(rng, 6), custom=kinds[i]) for _ in range(rng.randint(0, 4))]
        for i in range(calls)
    ]
    deltas: list[Delta] = []
    started = 0
    while any(pending):
        open_calls = [p for p in pending[: started + 1] if p]
        group = (
            [open_calls[0].pop(0)]
            if len(open_calls) == 1 or rng.random() < 0.7
            else [p.pop(0) for p in open_calls[:2]]
        )
        if started < calls - 1 and not pending[started]:
            started += 1
        elif started < calls - 1 and rng.random() < 0.3:
            started += 1  # the next call starts before this one has ended
        deltas.append(Delta(choice, tool_calls=tuple(group)))
    return deltas


def _merge(rng: random.Random, plans: list[list[Delta]]) -> list[list[Delta]]:
    """Chunks of deltas: choices interleave, sometimes two share a chunk."""
    chunks: list[list[Delta]] = []
    while any(plans):
        live = [p for p in plans if p]
        if len(live) > 1 and rng.random() < 0.3:
            chunks.append([p.pop(0) for p in live])
        else:
            chunks.append([rng.choice(live).pop(0)])
    return chunks


def _usage_events(rng: random.Random, chunks: list[list[Delta]]) -> list[Event]:
    placement = rng.choice(("none", "none", "own-chunk", "finish-chunk", "cumulative"))
    events: list[Event] = []
    for n, deltas in enumerate(chunks):
        usage = None
        if placement == "cumulative" or (placement == "finish-chunk" and n == len(chunks) - 1):
            usage = Usage(rng.randint(1, 50), n + 1)
        events.append(Chunk(tuple(deltas), usage))
    if placement == "own-chunk":
        events.append(Chunk((), Usage(rng.randint(1, 50), rng.randint(1, 99))))
    return events


def _stream(rng: random.Random, capabilities: frozenset[str]) -> Response:
    n = 2 if "multiple_choices" in capabilities and rng.random() < 0.15 else 1
    plans = [_choice_plan(rng, i, capabilities) for i in range(n)]
    if "stream_error" in capabilities and rng.random() < 0.04:
        last = plans[-1][-1]
        plans[-1][-1] = replace(last, finish_reason="error")
    events = _usage_events(rng, _merge(rng, plans))
    if "truncation" in capabilities and rng.random() < 0.12:
        events = events[: rng.randint(0, len(events) - 1)]
    elif "stream_error" in capabilities and rng.random() < 0.1:
        cut = rng.randint(0, len(events))
        error = StreamError(
            _text(rng, 16, MESSAGE),
            rng.choice(("", "server_error")),
            rng.choice(("", "overloaded")),
            as_event=rng.random() < 0.4,
        )
        events = [*events[:cut], error]
        if rng.random() < 0.5:
            events.append(Done())
    elif rng.random() < 0.75:
        events.append(Done())
    if any(d.finish_reason == "error" for e in events if isinstance(e, Chunk) for d in e.deltas):
        events = _cut_after_error(events)
    return Response(
        "stream", tuple(events), quirks=_quirks(rng), id=f"chatcmpl-{rng.randint(0, 99999)}"
    )


def _cut_after_error(events: list[Event]) -> list[Event]:
    for n, event in enumerate(events):
        if isinstance(event, Chunk) and any(d.finish_reason == "error" for d in event.deltas):
            return events[: n + 1]
    return events


def _quirks(rng: random.Random) -> frozenset[str]:
    chosen: set[str] = set()
    if rng.random() < 0.5:
        chosen.add(rng.choice(LINE_ENDS))
    spacing = [q for q in FRAMING if q not in LINE_ENDS]
    chosen.update(q for q in spacing if rng.random() < 0.1)
    if {"no-space-after-colon", "space-after-colon"} <= chosen:
        chosen.discard("space-after-colon")
    chosen.update(q for q in JSON_SHAPES if rng.random() < 0.1)
    if {"finish-reason-key-missing", "finish-reason-empty-string"} <= chosen:
        chosen.discard("finish-reason-key-missing")
    return frozenset(chosen)


def _completion(rng: random.Random, capabilities: frozenset[str]) -> Response:
    n = 2 if "multiple_choices" in capabilities and rng.random() < 0.15 else 1
    deltas = []
    for i in range(n):
        calls = rng.randint(1, 2) if _calls_drawn(capabilities) and rng.random() < 0.3 else 0
        custom = _custom_share(capabilities)
        content = _text(rng, 30) if rng.random() < 0.9 else ""
        # A message is one delta holding every part at once (semantics §9).
        parts = _part_deltas(rng, i, capabilities)
        audio = [d.audio for d in parts if d.audio is not None]
        deltas.append(
            Delta(
                i,
                content=content,
                reasoning=_text(rng) if "reasoning" in capabilities and rng.random() < 0.3 else "",
                tool_calls=tuple(
                    CallDelta(
                        c,
                        id=f"call_{c}",
                        name="get",
                        arguments='{"a":1}',
                        head=True,
                        custom=rng.random() < custom,
                    )
                    for c in range(calls)
                ),
                finish_reason="tool_calls" if calls else rng.choice(FINISH),
                function_call=_whole_call(parts),
                logprobs=(content,) if content and "logprobs" in capabilities else (),
                audio=_whole_audio(audio),
                annotations=tuple(u for d in parts for u in d.annotations),
            )
        )
    usage = Usage(rng.randint(1, 50), rng.randint(1, 99)) if rng.random() < 0.7 else None
    quirks = frozenset(
        q for q in ("json-python-separators", "alphabetical-keys") if rng.random() < 0.2
    )
    return Response("json", (Chunk(tuple(deltas), usage),), quirks=quirks)


def _whole_call(parts: list[Delta]) -> tuple[str, str] | None:
    """The legacy function call of a message: the drawn pieces joined."""
    pieces = [d.function_call for d in parts if d.function_call is not None]
    if not pieces:
        return None
    return pieces[0][0], "".join(arguments for _, arguments in pieces)


def _whole_audio(pieces: list[AudioDelta]) -> AudioDelta | None:
    """The audio of a message: the drawn pieces as one."""
    if not pieces:
        return None
    expires = [p.expires_at for p in pieces if p.expires_at]
    return AudioDelta(
        pieces[0].id,
        b"".join(p.data for p in pieces),
        "".join(p.transcript for p in pieces),
        expires[-1] if expires else 0,
    )
