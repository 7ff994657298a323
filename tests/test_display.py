from __future__ import annotations

from streamproof.reporting.wire import visible, wire_view


def test_invisible_bytes_are_named() -> None:
    assert visible(b"\xef\xbb\xbfa\r\n\x00\t\x7f") == "<BOM>a\\r\\n\n\\0\\t\\x7f"


def test_bad_utf8_shows_its_bytes() -> None:
    assert visible(b"a\xffb") == "a\\xffb"


def test_reads_are_marked_even_inside_a_character() -> None:
    emoji = "😀".encode()
    assert wire_view(emoji, [1, 4]) == "\\xf0¦\\x9f\\x98\\x80"


def test_large_bodies_are_capped() -> None:
    text = wire_view(b"x" * 50, limit=10)
    assert text.startswith("x" * 10)
    assert text.endswith("… 40 more bytes not shown")
