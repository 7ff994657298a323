"""Files written whole or not at all, and never through what is not a plain file.

Every file streamproof writes goes through ``write_atomic`` (or, written
piece by piece, ``writing_atomic``): the text is written to a temporary
file in the target's own folder, flushed to disk, then renamed over the
target with ``os.replace``. A crash, an interruption
or a full disk leaves the old file (or no file), never half of a new one.
``replace_into`` does the same for a file another program wrote (pytest's
JUnit XML, pytest-html's report). Standard library only; every layer may
import this module.

What the target is decides how it is written (``written_into``):

- a plain file, or nothing yet: replaced as above;
- a FIFO or a character device (``/dev/null``, a terminal, ``mkfifo``): it
  is written into, never replaced; the text is still staged whole in a
  temporary file (in the system's temporary folder), so a reader gets all of
  it or nothing;
- a symbolic link at the final component is not followed and the write is
  refused (``OSError``, one line naming the file), except for the links
  naming this process's own descriptors (``/dev/stdout``, ``/dev/stderr``,
  ``/dev/fd/N``, the shell's ``>(jq .)``) when they lead to a FIFO or a
  character device: those are written into;
- a block device, a socket or a folder is refused.

``staged_together`` makes the files of one batch (a run's outputs) all new or
all old: inside ``batch.collecting()`` every ``writing_atomic`` stays staged in
its temporary file, ``batch.stage`` gives one to a file another program writes,
and the batch renames them all together at its end (SIGINT and SIGTERM wait
until the renames are done; a FIFO or device is written into after them), or
discards them all if the block raises. ``batch.written`` and ``batch.unwritten``
say which were put in place.

``opened_for_appending`` opens a target the same way to add lines at its end
(``--trace`` after its first writer, several at once); ``held_open`` keeps a
FIFO open while it is opened several times, so that its reader sees one end.

A writer killed with SIGKILL cannot remove its temporary file. Each carries
its writer's process id (``.streamproof-partial-NAME.PID.XXXXXXXX``); the next
write of the same target removes those of this user whose writer is gone. (A
process id from another PID namespace sharing the folder cannot be told
apart from a dead one: such a writer's rename then fails, loudly.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TextIO

__all__ = [
    "Batch",
    "discard",
    "held_open",
    "opened_for_appending",
    "replace_into",
    "staged_together",
    "temporary_beside",
    "write_atomic",
    "writing_atomic",
    "written_into",
]

_PREFIX = ".streamproof-partial-"
# The process's own descriptors, through the links the system gives them.
_DESCRIPTOR = re.compile(
    r"/dev/(stdout|stderr|fd/[0-9]+)|/proc/(self|thread-self|[0-9]+)/fd/[0-9]+"
)
# What follows the target's name in a temporary file's: its writer's process id, mkstemp's letters.
_WRITER = re.compile(r"([0-9]{1,10})\.[a-z0-9_]+")
_REFUSED = {
    stat.S_IFBLK: (errno.EINVAL, "is a block device, not a file"),
    stat.S_IFSOCK: (errno.EINVAL, "is a socket, not a file"),
    stat.S_IFDIR: (errno.EISDIR, "is a folder, not a file"),
}


def _refusal(target: Path, mode: int) -> OSError:
    code, text = _REFUSED.get(stat.S_IFMT(mode), (errno.EINVAL, "is not a plain file"))
    return OSError(code, text, str(target))


def _descriptor(target: Path) -> bool:
    """``target`` names one of this process's descriptors (``/dev/stdout``, ``/dev/fd/3``)."""
    path = os.path.abspath(target)
    found = _DESCRIPTOR.fullmatch(path)
    return found is not None and found.group(2) in (None, "self", "thread-self", str(os.getpid()))


def written_into(target: Path) -> bool:
    """Whether ``target`` is written into (a FIFO or a character device) rather than
    replaced (a plain file, or none yet); ``OSError`` for anything else."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        if _descriptor(target):
            raise OSError(errno.EBADF, "names no open descriptor", str(target)) from None
        return False
    if stat.S_ISLNK(mode):
        mode = _followed(target)
    if stat.S_ISREG(mode):
        return False
    if _into(mode):
        return True
    raise _refusal(target, mode)


def _into(mode: int) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _followed(link: Path) -> int:
    """The mode of what ``link`` leads to, when it is one of the process's own
    descriptors leading to a FIFO or a character device; else ``OSError``."""
    if _descriptor(link):
        mode = os.stat(link).st_mode
        if _into(mode):
            return mode
    raise OSError(
        errno.ELOOP,
        "is a symbolic link; streamproof does not write through links (name the file itself)",
        str(link),
    )


def _opened(target: Path, flags: int) -> int:
    """A descriptor of ``target`` for writing, never through a link but the
    process's own; checked again once open, in case the path changed meanwhile."""
    into = written_into(target)
    if not _descriptor(target):
        flags |= os.O_NOFOLLOW
    fd = os.open(target, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | flags, 0o666)
    mode = os.fstat(fd).st_mode
    if _into(mode) if into else stat.S_ISREG(mode):
        return fd
    os.close(fd)
    raise OSError(errno.EAGAIN, "changed while it was being opened; not written", str(target))


@contextlib.contextmanager
def _naming(target: Path) -> Iterator[None]:
    """An ``OSError`` that names no file (a full disk, ``/dev/full``) names ``target``."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc


def temporary_beside(target: Path) -> Path:
    """A new, empty temporary file for ``target`` (created now): in its folder, or
    in the system's temporary folder for a target written into (``/dev/null``)."""
    folder = Path(tempfile.gettempdir()) if written_into(target) else target.parent
    prefix = f"{_PREFIX}{target.name}."
    _remove_stale(folder, prefix)
    fd, name = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", dir=folder)
    os.close(fd)
    return Path(name)


def _remove_stale(folder: Path, prefix: str) -> None:
    """Remove the temporary files of ``prefix`` in ``folder`` that a writer of this
    user left when it was killed (its process is gone)."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not entry.name.startswith(prefix):
                continue
            found = _WRITER.fullmatch(entry.name.removeprefix(prefix))
            if found is None or _alive(int(found[1])):
                continue
            status = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(status.st_mode) and status.st_uid == os.geteuid():
                discard(Path(entry.path))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # (another user's, or no process id: not ours to judge)
    return True


def discard(path: Path) -> None:
    """Remove ``path`` if it exists."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def replace_into(temporary: Path, target: Path) -> None:
    """Move the finished ``temporary`` over ``target`` in one step (or copy it
    into a FIFO or device ``target``, see ``written_into``).

    ``mkstemp`` creates files readable by their owner only; the moved file
    gets the permissions a plain ``open(target, "w")`` would have given it.
    """
    if written_into(target):
        try:
            with (
                _naming(target),
                open(temporary, "rb") as staged,
                open(_opened(target, 0), "wb") as out,
            ):
                shutil.copyfileobj(staged, out)
        finally:
            discard(temporary)
        return
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)
    os.replace(temporary, target)


def write_atomic(target: Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``target`` all at once: a temporary file, then a rename."""
    with writing_atomic(target, encoding=encoding) as out:
        out.write(text)


@contextlib.contextmanager
def writing_atomic(target: Path, *, encoding: str = "utf-8") -> Iterator[TextIO]:
    """A file to write ``target`` through, piece by piece; it replaces ``target``
    in one step when the block ends, and is removed if the block raises."""
    temporary = temporary_beside(target)
    try:
        with _naming(target):
            with open(temporary, "w", encoding=encoding, newline="") as out:
                yield out
                out.flush()
                os.fsync(out.fileno())
            batch = _COLLECTING.get()
            if batch is None:
                replace_into(temporary, target)
            else:
                batch.add(temporary, target)
    except BaseException:
        discard(temporary)
        raise


class Batch:
    """Files staged in their temporary files, put in place together (``staged_together``)."""

    def __init__(self) -> None:
        self.staged: dict[Path, Path] = {}  # target: its temporary file
        self.written: list[Path] = []

    @property
    def unwritten(self) -> list[Path]:
        return [target for target in self.staged if target not in self.written]

    def add(self, temporary: Path, target: Path) -> None:
        """Stage the finished ``temporary`` for ``target`` (replacing one staged before)."""
        earlier = self.staged.pop(target, None)
        if earlier is not None and earlier != temporary:
            discard(earlier)
        self.staged[target] = temporary

    def stage(self, target: Path) -> Path:
        """A new temporary file for ``target``, for another program to write; staged."""
        temporary = temporary_beside(target)
        self.add(temporary, target)
        return temporary

    def withdraw(self, *targets: Path) -> None:
        """Discard ``targets`` (default: all) staged and not yet written."""
        for target in targets or self.unwritten:
            if target not in self.written and target in self.staged:
                discard(self.staged.pop(target))

    @contextlib.contextmanager
    def collecting(self) -> Iterator[Batch]:
        """During the block, ``writing_atomic`` (and ``write_atomic``) stage into this batch."""
        token = _COLLECTING.set(self)
        try:
            yield self
        finally:
            _COLLECTING.reset(token)

    def commit(self) -> None:
        """Rename the plain files into place, signals held meanwhile; then write
        into the FIFOs and devices."""
        later = [target for target in self.unwritten if written_into(target)]
        with _signals_held():
            for target in self.unwritten:
                if target not in later:
                    self._put(target)
        for target in later:
            self._put(target)

    def _put(self, target: Path) -> None:
        replace_into(self.staged[target], target)
        self.written.append(target)


_COLLECTING: ContextVar[Batch | None] = ContextVar("streamproof_batch", default=None)


@contextlib.contextmanager
def staged_together(batch: Batch | None = None) -> Iterator[Batch]:
    """A batch of files (``batch``, or a new one) put in place together when the
    block ends, or none of them if it raises (see ``Batch``)."""
    batch = Batch() if batch is None else batch
    try:
        yield batch
        batch.commit()
    finally:
        batch.withdraw()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM received during the block take effect at its end
    (in the main thread; elsewhere signals cannot be handled, and are not held)."""
    held: list[int] = []

    def hold(signum: int, frame: object) -> None:
        held.append(signum)

    try:
        previous = {signum: signal.signal(signum, hold) for signum in _HELD}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        for first in held[:1]:
            signal.raise_signal(first)


_HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def held_open(target: Path | None) -> Iterator[None]:
    """Keep a FIFO ``target`` open for writing during the block: its reader reads
    one stream, however often the block opens and closes ``target`` meanwhile."""
    if target is None or not written_into(target) or not stat.S_ISFIFO(os.stat(target).st_mode):
        yield
        return
    fd = _opened(target, 0)
    try:
        yield
    finally:
        os.close(fd)


def opened_for_appending(target: Path, *, encoding: str = "utf-8") -> TextIO:
    """``target`` opened to add text at its end, created if missing (see ``written_into``)."""
    flags = os.O_APPEND if written_into(target) else os.O_APPEND | os.O_CREAT
    return open(_opened(target, flags), "w", encoding=encoding)
