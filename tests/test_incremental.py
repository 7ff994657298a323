from __future__ import annotations

import json

from streamproof.harness.incremental import check_deltas, content_events


def event(text: str, index: int = 0) -> bytes:
    chunk = {"choices": [{"index": index, "delta": {"content": text}}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


BODY = event("Hel") + b": keep-alive\n\n" + event("lo") + b"data: [DONE]\n\n"
FIRST_END = len(event("Hel"))
SECOND_END = FIRST_END + len(b": keep-alive\n\n") + len(event("lo"))


def test_the_scan_finds_each_content_event_end() -> None:
    assert content_events(BODY) == [(FIRST_END, 0, "Hel"), (SECOND_END, 0, "lo")]


def test_the_scan_handles_crlf_cr_and_multi_line_data() -> None:
    body = b'data: {"choices":[{"index":1,\r\ndata: "delta":{"content":"x"}}]}\r\n\r\n'
    assert content_events(body) == [(len(body), 1, "x")]
    assert content_events(b'data: {"choices":[{"delta":{"content":"y"}}]}\r\r') == [(47, 0, "y")]


def test_the_scan_skips_done_comments_and_corrupt_data() -> None:
    assert content_events(b"data: [DONE]\n\n: hi\n\ndata: {oops\n\n") == []


def test_pieces_surfaced_with_their_event_pass() -> None:
    deltas = [
        {"choice": 0, "content": "Hel", "at_byte": FIRST_END},
        {"choice": 0, "content": "lo", "at_byte": SECOND_END},
    ]
    ends = list(range(1, len(BODY) + 1))  # the bytes transport
    assert check_deltas(BODY, ends, deltas) is None


def test_pieces_may_merge_or_split_as_long_as_they_are_on_time() -> None:
    deltas = [
        {"choice": 0, "content": "H", "at_byte": FIRST_END},
        {"choice": 0, "content": "el", "at_byte": FIRST_END},
        {"choice": 0, "content": "lo", "at_byte": len(BODY)},
    ]
    ends = [FIRST_END, len(BODY)]
    assert check_deltas(BODY, ends, deltas) is None


def test_a_piece_surfaced_after_its_read_fails() -> None:
    deltas = [{"choice": 0, "content": "Hello", "at_byte": len(BODY)}]
    problem = check_deltas(BODY, list(range(1, len(BODY) + 1)), deltas)
    assert problem is not None and "'Hel'" in problem and "0 of 3 characters" in problem


def test_under_one_read_everything_is_on_time() -> None:
    deltas = [{"choice": 0, "content": "Hello", "at_byte": len(BODY)}]
    assert check_deltas(BODY, [len(BODY)], deltas) is None


def test_deltas_must_add_up_to_the_content() -> None:
    deltas = [{"choice": 0, "content": "Help", "at_byte": len(BODY)}]
    problem = check_deltas(BODY, [len(BODY)], deltas)
    assert problem is not None and "add up to 'Help'" in problem


def test_no_deltas_or_backwards_bytes_fail() -> None:
    assert check_deltas(BODY, [len(BODY)], None) == "the adapter reports no deltas list"
    backwards = [
        {"choice": 0, "content": "Hel", "at_byte": 50},
        {"choice": 0, "content": "lo", "at_byte": 10},
    ]
    assert "goes backwards" in (check_deltas(BODY, [len(BODY)], backwards) or "")
