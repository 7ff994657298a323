"""Output paths that are not plain files: nothing is replaced or written through a link.

A FIFO or a character device (``/dev/null``, ``/dev/stdout``, the shell's
``>(jq .)``) is written into directly; a block device or a socket is
refused in one line; a symbolic link at the final component is never
followed, for every option that names a file ``run`` writes and for
``--trace``. The devices are made with ``mknod`` in the test's own folder
(root only), never the system's ``/dev/null`` or ``/dev/full``.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.atomic import write_atomic, writing_atomic
from streamproof.cli import main
from streamproof.harness.trace import TraceFile

from .corpus_builder import build_corpus, one_line

#: Every option of ``run`` that names a file it writes (``--html`` through pytest-html).
OUTPUTS = ["--json", "--baseline", "--html", "--junit", "--write-expect", "--trace"]
PARTIAL = ".streamproof-partial-*"


def _run(root: Path, option: str, target: Path) -> list[str]:
    html = [] if option == "--html" else ["--no-html"]
    return ["run", "--corpus", str(root), "--transport", "whole", *html, option, str(target)]


def _device(path: Path, kind: int, minor: int) -> Path:
    """A device node at ``path`` (1,3 is null, 1,7 is full); the test skips if it cannot."""
    try:
        os.mknod(path, kind | 0o666, os.makedev(1 if kind == stat.S_IFCHR else 7, minor))
    except (PermissionError, AttributeError):
        pytest.skip("mknod needs root")
    return path


class _Reader:
    """Reads a FIFO (or a pipe's reading end) to its end in a thread, as ``jq`` would."""

    def __init__(self, source: Path | int) -> None:
        self.data = b""
        self._source = source
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with open(self._source, "rb") as stream:
            self.data = stream.read()

    def result(self) -> bytes:
        self._thread.join(timeout=60)
        assert not self._thread.is_alive()
        return self.data


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_corpus(tmp_path)


def _kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    return "link" if stat.S_ISLNK(mode) else "fifo" if stat.S_ISFIFO(mode) else "other"


@pytest.mark.parametrize("option", OUTPUTS)
def test_a_character_device_is_written_into_not_replaced(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, option: str
) -> None:
    null = _device(tmp_path / "mynull", stat.S_IFCHR, 3)
    assert main(_run(root, option, null)) in (0, 1)
    assert stat.S_ISCHR(os.lstat(null).st_mode), f"{option} replaced the device"
    assert not list(tmp_path.glob(PARTIAL))


@pytest.mark.parametrize("option", ["--json", "--html", "--trace"])
def test_a_full_device_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, option: str
) -> None:
    full = _device(tmp_path / "myfull", stat.S_IFCHR, 7)
    code = main(_run(root, option, full))
    err = capsys.readouterr().err
    assert code == 2 and one_line(err)
    assert str(full) in err and "No space left on device" in err
    assert stat.S_ISCHR(os.lstat(full).st_mode)


@pytest.mark.parametrize("option", OUTPUTS)
def test_a_fifo_is_written_into_not_replaced(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, option: str
) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    reader = _Reader(fifo)
    code = main(_run(root, option, fifo))
    if code == 2:  # (unblock the reader of a run that refused the FIFO)
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert code in (0, 1), capsys.readouterr().err
    assert reader.result().strip()
    assert _kind(fifo) == "fifo"


def test_a_descriptor_path_is_written_into(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    """``--json /dev/stdout`` or ``>(jq .)``: a link into the process's own descriptors."""
    read, write = os.pipe()
    reader = _Reader(read)
    try:
        code = main(_run(root, "--json", Path(f"/dev/fd/{write}")))
    finally:
        os.close(write)
    assert code == 0, capsys.readouterr().err
    assert reader.result().startswith(b"{")


@pytest.mark.parametrize("option", OUTPUTS)
@pytest.mark.parametrize("dangling", [False, True])
def test_a_link_at_the_final_component_is_refused(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, option: str, dangling: bool
) -> None:
    victim = tmp_path / "victim.txt"
    if not dangling:
        victim.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "out.file"
    link.symlink_to(victim)
    code = main(_run(root, option, link))
    captured = capsys.readouterr()
    assert code == 2 and one_line(captured.err)
    assert option in captured.err and "symbolic link" in captured.err
    assert captured.out == ""  # refused before any case ran
    assert _kind(link) == "link"
    if dangling:
        assert not victim.exists()
    else:
        assert victim.read_text(encoding="utf-8") == "keep me\n"


def test_check_adapter_refuses_a_trace_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "trace.jsonl"
    link.symlink_to(victim)
    code = main(["check-adapter", "reference", "--trace", str(link)])
    err = capsys.readouterr().err
    assert code == 2 and one_line(err) and "symbolic link" in err
    assert victim.read_text(encoding="utf-8") == "keep me\n" and _kind(link) == "link"


def test_the_plugin_refuses_a_trace_link_in_one_line(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    link = pytester.path / "trace.jsonl"
    link.symlink_to(victim)
    result = pytester.runpytest(
        "--streamproof=reference",
        "--streamproof-case=generic/text-split-per-token",
        "--streamproof-transport=whole",
        f"--streamproof-trace={link}",
        "-p",
        "no:cacheprovider",
    )
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "symbolic link" in out and "OSError" not in out and out.count("symbolic link") == 1
    assert victim.read_text(encoding="utf-8") == "keep me\n" and _kind(link) == "link"


@pytest.mark.parametrize("option", ["--json", "--merge"])
def test_scaling_refuses_an_output_link_before_it_measures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str
) -> None:
    link = tmp_path / "scaling.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    code = main(["scaling", "--quick", option, str(link)])
    captured = capsys.readouterr()
    assert code == 2 and one_line(captured.err) and "symbolic link" in captured.err
    assert captured.out == "" and not (tmp_path / "elsewhere.json").exists()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # (a socket's path must be short)
    return tmp_path


@pytest.mark.parametrize("option", OUTPUTS)
@pytest.mark.parametrize("kind", ["block", "socket"])
def test_a_block_device_or_a_socket_is_refused(
    capsys: pytest.CaptureFixture[str], root: Path, in_tmp: Path, option: str, kind: str
) -> None:
    target = Path("target")
    with socket.socket(socket.AF_UNIX) as server:
        if kind == "socket":
            server.bind(str(target))
        else:
            _device(in_tmp / target, stat.S_IFBLK, 0)
        code = main(_run(root, option, target))
        captured = capsys.readouterr()
        assert code == 2 and one_line(captured.err)
        assert option in captured.err and (
            "block device" in captured.err or "socket" in captured.err
        )
        assert captured.out == ""
        assert not stat.S_ISREG(os.lstat(target).st_mode)


def test_write_atomic_refuses_what_it_cannot_write_into(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError, match="symbolic link"):
        write_atomic(tmp_path / "link", "x")
    assert not (tmp_path / "elsewhere").exists()
    assert not list(tmp_path.glob(PARTIAL))


def test_a_trace_replaces_the_old_one_when_closed(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text("old trace\n", encoding="utf-8")
    trace = TraceFile(path, append=False)
    trace("to-adapter", 1, b'{"cmd": "start"}\n')
    assert path.read_text(encoding="utf-8") == "old trace\n"  # whole until closed
    trace.close()
    assert '"cmd\\": \\"start' in path.read_text(encoding="utf-8")
    appended = TraceFile(path)
    appended("from-adapter", 1, b"{}\n")
    appended.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and '"from-adapter"' in lines[1]
    assert not list(tmp_path.glob(PARTIAL))


# Writes half a file through writing_atomic, says so, then waits to be killed.
_KILLED_WRITER = """
import sys, time
from pathlib import Path
from streamproof.atomic import writing_atomic
with writing_atomic(Path(sys.argv[1])) as out:
    out.write("half")
    out.flush()
    print("writing", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def killed_writer(tmp_path: Path) -> Iterator[Path]:
    """The target of a writer killed with SIGKILL in the middle of writing it."""
    target = tmp_path / "out.json"
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        assert child.stdout is not None
        child.stdout.close()
    assert list(tmp_path.glob(PARTIAL))
    yield target


def test_a_later_write_removes_what_a_killed_writer_left(
    tmp_path: Path, killed_writer: Path
) -> None:
    write_atomic(killed_writer, "whole\n")
    assert killed_writer.read_text(encoding="utf-8") == "whole\n"
    assert not list(tmp_path.glob(PARTIAL))


def test_a_live_writers_partial_file_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    with writing_atomic(target) as out:
        out.write("first")
        write_atomic(target, "second\n")
        assert len(list(tmp_path.glob(PARTIAL))) == 1  # this writer's own, still open
    assert target.read_text(encoding="utf-8") == "first"
    assert not list(tmp_path.glob(PARTIAL))
