"""The worker process that runs an in-process Python adapter in isolation.

``python -m streamproof.harness.worker SPEC`` (or by its old name,
``streamproof.worker``) loads the adapter once and serves cases over the
subprocess protocol (JSON lines on stdin/stdout, docs/protocol.md), so the
harness can kill and restart it when a parser hangs or dies, and treats our
own adapters exactly as it treats one in any other language.

The adapter's own prints go to stderr: stdout carries the protocol only.
The worker ends itself, with every process it or the adapter started, as
soon as the harness that started it is gone (see ``_die_with_parent``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

from .loader import AdapterError, ReplayResponse, load_adapter

__all__ = ["main"]

PROTOCOL = 1

_PARENT_POLL = 0.25  # seconds between two looks at the parent


def _die_with_parent(parent: int) -> None:
    """End this process group once ``parent`` is gone (we are re-parented).

    A thread that polls ``getppid()`` rather than Linux's PR_SET_PDEATHSIG:
    that signal follows the *thread* that spawned us (the harness restarts
    workers from worker threads), and it would kill the worker alone, leaving
    the adapter's own children behind. Killing the group takes them too.
    """
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL)
    if os.getpgrp() == os.getpid():  # we lead our group (the harness made it so)
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(1)


def _watch_parent() -> None:
    # The parent as the worker starts: the harness, or whatever command a
    # cmd: spec wrapped the worker in (then the harness ends the group itself).
    parent = os.getppid()
    threading.Thread(target=_die_with_parent, args=(parent,), daemon=True).start()


def _reply(out: IO[str], message: dict[str, Any] | str) -> None:
    """Send ``message``, or a line ``_answer`` encoded already."""
    # What the adapter printed for this case reaches the harness before the reply.
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    line = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)
    out.write(line + "\n")
    out.flush()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# Frames inside these folders are the harness's own, not the adapter's: a crash's
# traceback shows where the adapter and the library it drives raised.
_HARNESS = (
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
    os.path.join(os.path.dirname(os.path.abspath(os.__file__)), "asyncio") + os.sep,
)
#: At most this many frames (the innermost) travel with a crash.
TRACEBACK_FRAMES = 30


def _adapter_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """``exc``'s frames, outermost first, harness frames left out, the innermost kept."""
    return [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith(_HARNESS)
    ][-TRACEBACK_FRAMES:]


def _formatted(frames: list[traceback.FrameSummary], exc: BaseException) -> str:
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip("\n")


def adapter_traceback(exc: BaseException) -> str:
    """``exc``'s traceback as text, harness frames left out, innermost last."""
    frames = _adapter_frames(exc)
    return _formatted(frames, exc) if frames else ""


def _crash_reply(seq: Any, exc: BaseException, at_byte: int | None) -> dict[str, Any]:
    """The crash reply for ``exc``: its line, traceback and ``frames`` (outermost
    first), and ``at_byte``, the body bytes handed out when it escaped (docs/protocol.md)."""
    reply: dict[str, Any] = {"seq": seq, "crash": _one_line(exc)}
    frames = _adapter_frames(exc)
    if frames:
        reply["traceback"] = _formatted(frames, exc)
        reply["frames"] = [
            {"file": f.filename, "line": f.lineno or 0, "function": f.name} for f in frames
        ]
    if at_byte is not None:
        reply["at_byte"] = at_byte
    return reply


def _answer(
    seq: Any, produce: Callable[[], Any], delivered: Callable[[], int] | None = None
) -> dict[str, Any] | str:
    """The reply to one case: its outcome (encoded, as it was checked), or why there is none.

    An outcome that ``json`` would write but is not strict JSON (NaN,
    Infinity, a key that is not a string) is a crash naming where: it must
    never reach a results file. ``delivered`` says how many body bytes the
    adapter has been handed (none for a ``call``: a socket's reads are the client's).
    """
    from .strict_json import first_problem

    try:
        outcome = produce()
    except Exception as exc:  # the adapter's (or its client's) fault: a crash verdict
        return _crash_reply(seq, exc, None if delivered is None else delivered())
    problem = first_problem(outcome)
    if problem:
        return {"seq": seq, "crash": f"outcome is not strict JSON: {problem}"}
    try:
        return json.dumps({"seq": seq, "outcome": outcome}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return {"seq": seq, "invalid": f"outcome is not JSON: {_one_line(exc)}"}


def _ends(boundaries: Any, size: int) -> list[int]:
    """The boundaries as sent: a list, or ``{"every": N}`` (a read of N bytes, the last shorter)."""
    if isinstance(boundaries, dict):
        step = boundaries.get("every")
        if type(step) is not int or step < 1:
            raise ValueError(f"boundaries {boundaries!r}: 'every' must be a positive integer")
        ends = list(range(step, size + 1, step))
        if size and (not ends or ends[-1] != size):
            ends.append(size)
        return ends
    return boundaries  # type: ignore[no-any-return]


def _run(adapter: Any, message: dict[str, Any]) -> dict[str, Any] | str:
    body = base64.b64decode(message["body"])
    try:
        ends = _ends(message["boundaries"], len(body))
    except ValueError as exc:
        return {"seq": message["seq"], "crash": f"protocol: {exc}"}
    response = ReplayResponse(
        status=message["status"],
        headers=message["headers"],
        request=message["request"],
        case_id=message["case"],
        transport=message["transport"],
        body=body,
        ends=ends,
    )
    return _answer(message["seq"], lambda: adapter.run(response), lambda: response.bytes_delivered)


def _call(adapter: Any, message: dict[str, Any]) -> dict[str, Any] | str:
    return _answer(
        message["seq"], lambda: adapter.run_call(message["base_url"], message["request"])
    )


def serve(spec: str, inp: IO[str], out: IO[str]) -> int:
    adapter = None
    for line in inp:
        message = json.loads(line)
        cmd = message.get("cmd")
        if cmd == "start":
            try:
                adapter = load_adapter(spec)
            except AdapterError as exc:
                _reply(out, {"error": str(exc)})
                return 2
            _reply(
                out,
                {
                    "name": adapter.name,
                    "version": adapter.version,
                    "capabilities": sorted(adapter.capabilities),
                    "protocol": PROTOCOL,
                    "call": adapter.call is not None,
                    "compact_boundaries": True,
                },
            )
        elif cmd == "run" and adapter is not None:
            _reply(out, _run(adapter, message))
        elif cmd == "call" and adapter is not None and adapter.call is not None:
            _reply(out, _call(adapter, message))
        elif cmd == "stop":
            return 0
        else:
            _reply(out, {"seq": message.get("seq"), "crash": f"unexpected command {cmd!r}"})
    return 0


def _forget_working_folder() -> None:
    """Take off ``sys.path`` the working folder that ``python -m`` put first.

    The loader alone decides what an adapter imports from, the same here as
    in ``streamproof debug`` (harness/loader.py): the worker's own way of
    starting must not let a file in the working folder shadow a library.
    """
    if not getattr(sys.flags, "safe_path", False) and sys.path[:1] == [os.getcwd()]:
        del sys.path[0]


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python -m streamproof.harness.worker ADAPTER-SPEC", file=sys.stderr)
        return 2
    _forget_working_folder()
    # Keep the protocol on a private copy of stdout and send the adapter's
    # prints (fd 1 and sys.stdout) to stderr, where they cannot corrupt it.
    _watch_parent()
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(0, encoding="utf-8", closefd=False) as inp:
        return serve(sys.argv[1], inp, protocol)


if __name__ == "__main__":
    sys.exit(main())
