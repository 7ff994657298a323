"""serve says what it replays: one line per response, and a warning for a slow one."""

from __future__ import annotations

import urllib.request

import pytest

from streamproof.corpus import load_corpus
from streamproof.live.serve import SLOW_SECONDS, ReplayServer, pace_line

pytest.importorskip("aiohttp")
CORPUS = load_corpus()
CASE = next(c for c in CORPUS.cases if c.id == "openai/text-stream-include-usage")


def test_each_response_is_one_log_line_with_case_transport_and_pace() -> None:
    lines: list[str] = []
    with ReplayServer(CORPUS, log=lines.append) as server:
        url = server.case_base_url(CASE.id, "lines") + "/chat/completions"
        request = urllib.request.Request(url, data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.read() == CASE.body
    assert len(lines) == 1
    line = lines[0]
    assert f"-> {CASE.id} [lines] HTTP 200: {len(CASE.body)} bytes in " in line
    assert "about 0.0 s" in line and "slow" not in line


def test_a_slow_combination_is_announced_at_the_start() -> None:
    reads = len(CASE.body)  # the bytes transport: one read per byte
    delays = [0.05] * reads
    assert sum(delays) > SLOW_SECONDS
    line = pace_line("POST", "/v1/chat/completions", CASE, "bytes", len(CASE.body), delays)
    assert f"{reads} reads, about {sum(delays):.1f} s (slow: 50 ms before each" in line
    quick = pace_line("POST", "/v1/chat/completions", CASE, "whole", len(CASE.body), [0.05])
    assert "slow" not in quick and "1 read," in quick
