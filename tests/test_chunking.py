from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamproof.harness.transports import boundaries, split

BODY = b"data: a\r\n\r\ndata: \xf0\x9f\x98\x80\n\n"


@pytest.mark.parametrize("transport", ["whole", "lines", "bytes", "random"])
def test_every_transport_covers_the_body_in_order(transport: str) -> None:
    ends = boundaries(BODY, transport, seed=3)
    assert ends == sorted(set(ends))
    assert ends[-1] == len(BODY)
    assert b"".join(split(BODY, ends)) == BODY


def test_lines_splits_every_crlf() -> None:
    chunks = split(BODY, boundaries(BODY, "lines"))
    assert chunks[:3] == [b"data: a\r", b"\n", b"\r"]


def test_bytes_is_one_byte_per_read() -> None:
    assert set(map(len, split(BODY, boundaries(BODY, "bytes")))) == {1}


def test_random_is_reproducible_by_seed() -> None:
    body = bytes(range(256)) * 8
    assert boundaries(body, "random", seed=1) == boundaries(body, "random", seed=1)
    assert boundaries(body, "random", seed=1) != boundaries(body, "random", seed=2)


def test_empty_body_has_no_reads() -> None:
    assert boundaries(b"", "whole") == []


def test_recorded_uses_chunks_json(tmp_path: Path) -> None:
    (tmp_path / "chunks.json").write_text(json.dumps({"sizes": [3, 5, len(BODY) - 8]}))
    assert boundaries(BODY, "recorded", case_dir=tmp_path) == [3, 8, len(BODY)]
    (tmp_path / "chunks.json").write_text(json.dumps({"sizes": [3]}))
    with pytest.raises(ValueError, match="covers 3 bytes"):
        boundaries(BODY, "recorded", case_dir=tmp_path)


def test_unknown_transport() -> None:
    with pytest.raises(ValueError, match="unknown transport"):
        boundaries(BODY, "pigeon")
