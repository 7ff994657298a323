"""A crash points at the parser: the frame named first, and the wire view at ``at_byte``.

Each adapter below has a parser that decodes every line of the stream whole,
forgetting the ``data:`` field name, so the JSON decoder raises on the first
event. The line worth reading is the parser's own call, one frame or more
above the runtime's decoder: the terminal, the results JSON and the HTML
report must name it first, and the report's wire view must show the first
event, where the parser raised, not the end of the body.
"""

from __future__ import annotations

import html
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest
from commands import streamproof as streamproof_cli
from hypothesis import given
from hypothesis import strategies as st

import streamproof
from streamproof.corpus import load_corpus
from streamproof.harness import nodejs
from streamproof.harness.crash_site import (
    MAX_FRAMES,
    Frame,
    at_byte_from,
    frames_from,
    is_runtime_own,
    raised_in,
)
from streamproof.harness.engine import Engine, Result, Verdict
from streamproof.reporting.pinpoint import pinpoint
from streamproof.resources import data_path

CASE = "generic/finish-without-done"
BY_ID = {c.id: c for c in load_corpus().cases}
BODY = BY_ID[CASE].body
FIRST_LINE = BODY.index(b"\n") + 1  # the bytes a line reader holds when it meets the first line
STDLIB_DECODER = json.decoder.__file__

PYTHON_ADAPTER = """\
import json

NAME = "forgets-the-field-name"
VERSION = "1"
CAPABILITIES = {"content", "finish_reason"}


class TinyParser:
    def __init__(self):
        self.rest = b""

    def feed(self, data):
        self.rest += data
        while b"\\n" in self.rest:
            line, self.rest = self.rest.split(b"\\n", 1)
            if line.strip():
                json.loads(line)  # the parser's line


def parse(response):
    parser = TinyParser()
    for data in response.iter_bytes():
        parser.feed(data)
    return {"status": "complete", "choices": []}
"""

NODE_ADAPTER = """\
import { serve } from %(protocol)s;

async function parse(response) {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const bytes of response.body) {
    rest += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = rest.indexOf('\\n')) >= 0) {
      const line = rest.slice(0, end);
      rest = rest.slice(end + 1);
      if (line.trim()) JSON.parse(line); // the parser's line
    }
  }
  return { status: 'complete', choices: [] };
}

serve({ name: 'forgets-the-field-name', version: '1', capabilities: ['content'], parse });
"""

# A cmd: adapter speaking the protocol by hand, replying to every case with a
# crash whose frames it was given (argv[1], JSON) and at_byte the end of the
# first read.
CMD_ADAPTER = """\
import json, sys

frames = json.loads(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        reply = {"name": "sends-frames", "version": "1", "capabilities": ["content"]}
    elif message["cmd"] == "run":
        reply = {"seq": message["seq"], "crash": "JSONDecodeError: Expecting value",
                 "frames": frames, "at_byte": message["boundaries"][0]}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""
PARSER_FRAME = {"file": "/srv/app/parser.py", "line": 12, "function": "feed"}
CMD_FRAMES = [
    {"file": "/srv/app/main.py", "line": 3, "function": "<module>"},
    PARSER_FRAME,
    {"file": json.__file__, "line": 346, "function": "loads"},
    {"file": STDLIB_DECODER, "line": 337, "function": "decode"},
]


def _line_of(source: str, marker: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if marker in line)


def _run(tmp_path: Path, spec: str, transport: str) -> tuple[str, dict[str, Any], str]:
    """``streamproof run`` over CASE under ``transport``: the terminal, the row, the HTML.

    The results file is checked against its schema on the way (``commands``).
    """
    results, report = tmp_path / "results.json", tmp_path / "report.html"
    proc = streamproof_cli(
        "run", "--adapter", spec, "--case", f"{CASE} [{transport}]",
        "--json", results, "--html", report, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (row,) = json.loads(results.read_text(encoding="utf-8"))["results"]
    assert row["verdict"] == "crash"
    return proc.stdout, row, report.read_text(encoding="utf-8")


def _names_first(stdout: str, row: dict[str, Any], report: str, frame: dict[str, Any]) -> None:
    """The terminal, the JSON and the HTML name ``frame`` before any other place."""
    where = str(Frame(**frame))
    lines = stdout.splitlines()
    crash = next(i for i, line in enumerate(lines) if line.startswith("CRASH"))
    assert lines[crash + 1] == f"  raised at {where}"
    assert row["raised_in"] == frame
    assert row["frames"][-1]["file"] != frame["file"]  # the innermost is the runtime's own
    shown = f"Raised at <code>{html.escape(where, quote=False)}</code>"
    assert shown in report
    assert report.index(shown) < report.index('<pre class="traceback">')


def _centred_on_the_first_line(row: dict[str, Any], report: str) -> None:
    assert row["at_byte"] == FIRST_LINE
    assert f'data-at="{FIRST_LINE - 1}"' in report
    assert f"(at_byte {FIRST_LINE})" in report
    assert "no closer place is known" not in report


def test_a_python_parser_calling_json_loads_is_named_before_the_decoder(tmp_path: Path) -> None:
    adapter = tmp_path.resolve() / "forgets.py"
    adapter.write_text(PYTHON_ADAPTER, encoding="utf-8")
    stdout, row, report = _run(tmp_path, str(adapter), "bytes")
    frame = {"file": str(adapter), "line": _line_of(PYTHON_ADAPTER, "# the parser's line")}
    _names_first(stdout, row, report, {**frame, "function": "feed"})
    assert row["frames"][-1]["file"] == STDLIB_DECODER
    assert row["traceback"].splitlines()[-1].startswith("json.decoder.JSONDecodeError")
    _centred_on_the_first_line(row, report)


def _node() -> str:
    try:
        cached = nodejs.node_binary(nodejs.cache_dir())
    except nodejs.NodeSetupError:
        cached = None
    if cached is not None and cached.is_file():
        return str(cached)
    found = shutil.which("node")
    if found is None:
        pytest.skip(f"no Node runtime: run '{nodejs.INSTALL_COMMAND}'")
    return found


def test_a_node_parser_calling_json_parse_is_named_before_v8(tmp_path: Path) -> None:
    node = _node()
    protocol = (data_path("adapters") / "node" / "protocol.mjs").resolve().as_uri()
    source = NODE_ADAPTER % {"protocol": json.dumps(protocol)}
    script = tmp_path.resolve() / "forgets.mjs"
    script.write_text(source, encoding="utf-8")
    stdout, row, report = _run(tmp_path, f"cmd:{shlex.join([node, str(script)])}", "bytes")
    frame = {"file": str(script), "line": _line_of(source, "// the parser's line")}
    # V8 names a function by how it was called: serve() calls adapter.parse().
    _names_first(stdout, row, report, {**frame, "function": "Object.parse"})
    # V8 lists the innermost frame first; the helper turned it round.
    assert row["frames"][-1] == {"file": "<anonymous>", "line": 0, "function": "JSON.parse"}
    assert all("protocol.mjs" not in f["file"] for f in row["frames"])
    assert row["traceback"].splitlines()[-1].startswith("SyntaxError: ")
    _centred_on_the_first_line(row, report)


LEAVES_REJECTED = """\
import { serve } from %(protocol)s;

async function parse(response) {
  for await (const bytes of response.body) {
    if (bytes.includes(10)) Promise.reject(new TypeError('left behind')); // the parser's line
  }
  return { status: 'complete', choices: [] };
}

serve({ name: 'leaves-a-rejection', version: '1', capabilities: ['content'], parse });
"""


def test_a_rejection_node_leaves_unhandled_names_where_it_was_made(tmp_path: Path) -> None:
    node = _node()
    protocol = (data_path("adapters") / "node" / "protocol.mjs").resolve().as_uri()
    source = LEAVES_REJECTED % {"protocol": json.dumps(protocol)}
    script = tmp_path.resolve() / "leaves.mjs"
    script.write_text(source, encoding="utf-8")
    engine = Engine(f"cmd:{shlex.join([node, str(script)])}")
    try:
        result = engine.run(BY_ID[CASE], "bytes")
    finally:
        engine.close()
    assert result.message == "unhandledRejection: TypeError: left behind"
    site = result.raised_in
    assert site is not None
    assert (site.file, site.line) == (str(script), _line_of(source, "// the parser's line"))
    assert result.at_byte == FIRST_LINE  # the read that brought the first line end


def _cmd(tmp_path: Path, frames: Any) -> str:
    script = tmp_path / "sends_frames.py"
    script.write_text(CMD_ADAPTER, encoding="utf-8")
    return f"cmd:{shlex.join([sys.executable, str(script), json.dumps(frames)])}"


def test_a_cmd_adapter_sending_frames_alone_is_named_first(tmp_path: Path) -> None:
    stdout, row, report = _run(tmp_path, _cmd(tmp_path, CMD_FRAMES), "lines")
    _names_first(stdout, row, report, PARSER_FRAME)
    assert row["frames"] == CMD_FRAMES and "traceback" not in row
    # With no traceback text, the frames themselves are shown, innermost last.
    assert f"    {Frame(**CMD_FRAMES[-1])}" in stdout.splitlines()
    _centred_on_the_first_line(row, report)


@pytest.mark.parametrize(
    "frames",
    [
        [{**PARSER_FRAME, "line": "12"}],
        [{**PARSER_FRAME, "line": True}],
        [{**PARSER_FRAME, "line": -1}],
        [{"file": "/srv/app/parser.py", "line": 12}],
        [{**PARSER_FRAME, "file": ""}],
        [PARSER_FRAME, "/srv/app/parser.py:12"],
        {"file": "/srv/app/parser.py", "line": 12, "function": "feed"},
    ],
    ids=["line-string", "line-bool", "line-negative", "no-function", "empty-file", "a-string",
         "not-a-list"],
)  # fmt: skip
def test_malformed_frames_are_dropped_and_the_crash_kept(frames: Any) -> None:
    assert frames_from(frames) == ()


def test_malformed_frames_over_the_wire_leave_a_plain_crash(tmp_path: Path) -> None:
    stdout, row, report = _run(tmp_path, _cmd(tmp_path, [{**PARSER_FRAME, "line": "12"}]), "lines")
    assert row["message"] == "JSONDecodeError: Expecting value"
    assert "raised_in" not in row and "frames" not in row
    assert "raised at" not in stdout and "Raised at" not in report
    assert row["at_byte"] == FIRST_LINE  # at_byte is checked on its own


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_FRAME_LIKE = st.fixed_dictionaries(
    {"file": _JSON | st.text(max_size=8), "line": _JSON, "function": _JSON | st.text(max_size=8)}
)


@given(st.lists(_FRAME_LIKE | _JSON, max_size=5) | _JSON)
def test_any_json_as_frames_is_frames_or_nothing(value: Any) -> None:
    frames = frames_from(value)
    assert all(type(f.line) is int and f.line >= 0 and f.file for f in frames)
    assert frames == () or len(frames) == len(value)


def test_frames_are_bounded_to_the_innermost() -> None:
    many = [{"file": f"/srv/f{i}.py", "line": i, "function": "f"} for i in range(MAX_FRAMES + 5)]
    kept = frames_from(many)
    assert len(kept) == MAX_FRAMES
    assert kept[-1] == Frame("/srv/f68.py", 68, "f") and kept[0].line == 5
    assert frames_from([{**PARSER_FRAME, "column": 4}]) == (Frame(**PARSER_FRAME),)


def test_at_byte_must_be_a_whole_number_from_zero() -> None:
    assert [at_byte_from(v) for v in (0, 7, -1, True, 7.0, "7", None)] == [
        0, 7, None, None, None, None, None,
    ]  # fmt: skip


def test_the_runtimes_own_library_and_streamproof_are_passed_over() -> None:
    own = [
        STDLIB_DECODER,
        json.__file__,
        "<frozen runpy>",
        "node:internal/process/task_queues",
        "<anonymous>",
        str(Path(streamproof.__file__).parent / "harness" / "worker.py"),
    ]
    assert [f for f in own if not is_runtime_own(f)] == []
    theirs = [jinja2.__file__, "/srv/app/parser.py", "[eval]", "/usr/lib/node_modules/x/y.js"]
    assert [f for f in theirs if is_runtime_own(f)] == []
    frames = [Frame("/srv/app/parser.py", 12, "feed"), Frame(STDLIB_DECODER, 337, "decode")]
    assert raised_in(frames) == frames[0]
    assert raised_in(frames[1:]) is None


def _crash(at_byte: int | None) -> Result:
    return Result(BY_ID[CASE], "bytes", Verdict.CRASH, message="boom", at_byte=at_byte)


def test_the_wire_view_of_a_crash_is_centred_on_at_byte() -> None:
    assert pinpoint(BODY, _crash(FIRST_LINE)).at == FIRST_LINE - 1
    assert pinpoint(BODY, _crash(0)).at == 0
    end = len(BODY) - 1
    assert pinpoint(BODY, _crash(None)).at == end  # no closer place is known
    assert pinpoint(BODY, _crash(len(BODY) + 1)).at == end  # past the body: not this case's


def test_frames_and_at_byte_cross_process_boundaries() -> None:
    frames = tuple(Frame(**f) for f in CMD_FRAMES)
    result = Result(BY_ID[CASE], "lines", Verdict.CRASH, message="x", frames=frames, at_byte=9)
    data = json.loads(json.dumps(result.as_dict()))
    assert data["raised_in"] == PARSER_FRAME
    back = Result.from_dict(data, BY_ID[CASE])
    assert (back.frames, back.at_byte, back.raised_in) == (frames, 9, Frame(**PARSER_FRAME))
