"""docs/protocol.md: linked, and its transcript is a real trace of the wire."""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

from streamproof.harness.adapter_check import check_adapter
from streamproof.harness.transports import boundaries

ROOT = Path(__file__).parent.parent
PAGE = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def _transcript() -> list[dict[str, object]]:
    block = re.search(r"```jsonl\n(.*?)```", PAGE, re.S)
    assert block, "docs/protocol.md has no jsonl transcript"
    return [json.loads(line) for line in block.group(1).splitlines()]


def test_the_readme_and_the_adapters_page_point_to_the_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/protocol.md)" in readme and "check-adapter" in readme
    adapters = (ROOT / "docs" / "adapters.md").read_text(encoding="utf-8")
    assert "(protocol.md)" in adapters
    assert "check-adapter" in adapters and "--trace FILE" in adapters


def test_the_transcript_is_a_trace_of_a_probe_two_cases_a_crash_and_stop() -> None:
    rows = _transcript()
    assert all(set(r) <= {"time", "pid", "dir", "bytes", "line", "truncated"} for r in rows)
    messages = [json.loads(str(r["line"])) for r in rows]
    assert [len(str(r["line"]).encode()) for r in rows] == [r["bytes"] for r in rows]
    commands = [m.get("cmd", "reply") for m in messages]
    assert commands[:4] == ["start", "reply", "stop", "start"]
    assert commands[-1] == "stop"
    assert rows[0]["pid"] != rows[3]["pid"]  # the probe, then the run's own process
    runs = [m for m in messages if m.get("cmd") == "run"]
    replies = [m for m in messages if "seq" in m and "cmd" not in m]
    assert [m["seq"] for m in runs] == [m["seq"] for m in replies] == [1, 2, 3]
    assert ["outcome" in r for r in replies].count(True) == 2
    assert ["crash" in r for r in replies].count(True) == 1
    for run in runs:  # boundaries are end offsets, the last one the body's length
        body = base64.b64decode(str(run["body"]))
        assert run["boundaries"] == boundaries(body, "lines")
        assert run["boundaries"][-1] == len(body)


def test_the_worked_example_is_what_the_transports_send() -> None:
    body = b'data: {"a":1}\n\ndata: [DONE]\n\n'
    assert "(29 bytes)" in PAGE and len(body) == 29
    assert "| `whole` | `[29]` |" in PAGE and boundaries(body, "whole") == [29]
    assert f"| `lines` | `{boundaries(body, 'lines')}` |" in PAGE
    assert f"| `random` (seed 1) | `{boundaries(body, 'random', seed=1)}` |" in PAGE
    assert boundaries(b"", "whole") == [] and "`boundaries` is `[]`" in PAGE


def test_the_page_names_every_check_adapter_rule() -> None:
    template = ROOT / "adapters" / "templates" / "protocol_adapter.py"
    rules = [c.rule for c in check_adapter(f"cmd:{sys.executable} {template}", timeout=10)]
    table = PAGE.split("## `check-adapter`", 1)[1].split("\n## ", 1)[0]
    assert len(rules) == 15
    assert [r for r in rules if f"`{r}`" not in table] == []
