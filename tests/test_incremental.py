from __future__ import annotations

import json

from streamproof.harness.incremental import check_deltas, content_events, covers


def event(text: str, index: int = 0) -> bytes:
    chunk = {"choices": [{"index": index, "delta": {"content": text}}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


BODY = event("Hel") + b": keep-alive\n\n" + event("lo") + b"data: [DONE]\n\n"
FIRST_END = len(event("Hel"))
SECOND_END = FIRST_END + len(b": keep-alive\n\n") + len(event("lo"))


def test_the_scan_finds_each_content_event_end() -> None:
    assert list(content_events(BODY)) == [(FIRST_END, 0, "Hel"), (SECOND_END, 0, "lo")]


def test_the_scan_handles_crlf_cr_and_multi_line_data() -> None:
    body = b'data: {"choices":[{"index":1,\r\ndata: "delta":{"content":"x"}}]}\r\n\r\n'
    assert list(content_events(body)) == [(len(body), 1, "x")]
    assert list(content_events(b'data: {"choices":[{"delta":{"content":"y"}}]}\r\r')) == [
        (47, 0, "y")
    ]


def test_the_scan_leaves_out_an_event_or_a_line_the_body_never_ended() -> None:
    assert list(content_events(BODY[: FIRST_END - 1])) == []  # a line, no blank line
    assert list(content_events(event("Hel")[:-2] + b"\r")) == []  # no blank line after it
    # An unended line of megabytes: the scan stays linear (it used to try a
    # line end at every byte, which took minutes for 100 KB).
    huge = event("Hel") + b"data: " + b"x" * 4_000_000
    assert list(content_events(huge)) == [(FIRST_END, 0, "Hel")]


def test_the_scan_skips_done_comments_and_corrupt_data() -> None:
    assert list(content_events(b"data: [DONE]\n\n: hi\n\ndata: {oops\n\n")) == []


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


def parts_event(*parts: dict[str, str]) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": list(parts)}}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def test_the_scan_reads_text_parts_and_leaves_thinking_out() -> None:
    body = parts_event({"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Hi"})
    assert list(content_events(body)) == [(len(body), 0, "Hi")]


def test_the_scan_skips_one_leading_byte_order_mark() -> None:
    body = b"\xef\xbb\xbf" + BODY
    assert list(content_events(body)) == [(FIRST_END + 3, 0, "Hel"), (SECOND_END + 3, 0, "lo")]
    assert list(content_events(b"\xef\xbb\xbf" + body)) == [(SECOND_END + 6, 0, "lo")]


def test_the_scan_follows_named_events_bare_fields_and_empty_data() -> None:
    named = b"event: error\n" + event("no")
    bare = b"event\nid\n" + event("yes")  # a bare "event" is the default type
    empty = b"data:\n\n"
    body = named + empty + bare
    assert list(content_events(body)) == [(len(body), 0, "yes")]
    assert list(content_events(b"event: message\n" + event("m"))) == [
        (len(event("m")) + 15, 0, "m")
    ]


def test_with_the_outcome_a_parser_may_stop_early_but_must_agree_with_itself() -> None:
    ends = list(range(1, len(BODY) + 1))
    stopped = [{"choice": 0, "content": "Hel", "at_byte": FIRST_END}]
    outcome = {"choices": [{"index": 0, "content": "Hel"}]}
    assert check_deltas(BODY, ends, stopped, outcome) is None
    assert "add up to 'Hel'" in (check_deltas(BODY, ends, stopped) or "")
    told = {"choices": [{"index": 0, "content": "Hello"}]}
    assert "the outcome's content is 'Hello'" in (check_deltas(BODY, ends, stopped, told) or "")
    wrong = [{"choice": 0, "content": "Help", "at_byte": FIRST_END}]
    said = {"choices": [{"index": 0, "content": "Help"}]}
    assert "not a start of" in (check_deltas(BODY, ends, wrong, said) or "")


def test_with_the_outcome_a_buffering_parser_still_fails() -> None:
    late = [{"choice": 0, "content": "Hello", "at_byte": len(BODY)}]
    outcome = {"choices": [{"index": 0, "content": "Hello"}]}
    problem = check_deltas(BODY, list(range(1, len(BODY) + 1)), late, outcome)
    assert problem is not None and "was not surfaced" in problem
    assert "the outcome's content is 'Hello'" in (
        check_deltas(BODY, [len(BODY)], [], outcome) or ""
    )


def test_covers_streamed_bodies_only() -> None:
    sse = {"content-type": "text/event-stream"}
    assert covers(200, sse, {})
    assert not covers(200, {"content-type": "application/json"}, {"stream": True})
    assert not covers(500, sse, {"stream": True})
    assert covers(200, {}, {"stream": True})


def test_judge_checks_every_stream_case_for_an_adapter_that_claims_incremental() -> None:
    from streamproof.corpus import load_corpus
    from streamproof.harness.engine import Verdict, judge
    from streamproof.harness.transports import boundaries, split
    from streamproof.reference import ResponseReader

    case = next(c for c in load_corpus().cases if c.id == "generic/text-split-per-token")
    assert "incremental" not in case.requires
    ends = boundaries(case.body, "bytes")
    reader = ResponseReader(case.status, case.headers, case.request)
    deltas = []
    for data, at in zip(split(case.body, ends), ends, strict=True):
        deltas += [
            {"choice": choice, "content": text, "at_byte": at} for choice, text in reader.feed(data)
        ]
    outcome = {**reader.close(), "deltas": deltas}
    buffered = {
        **outcome,
        "deltas": [
            {
                **deltas[0],
                "content": "".join(d["content"] for d in deltas),
                "at_byte": len(case.body),
            }
        ],
    }

    on_time = judge(case, "bytes", outcome, 0.0, ends, claims_incremental=True)
    assert on_time.verdict is Verdict.PASS and on_time.incremental
    late = judge(case, "bytes", buffered, 0.0, ends, claims_incremental=True)
    assert late.verdict is Verdict.FAIL and late.message.startswith("incremental: ")
    assert late.incremental and late.as_dict()["incremental"] is True
    unclaimed = judge(case, "bytes", buffered, 0.0, ends)
    assert unclaimed.verdict is Verdict.PASS and not unclaimed.incremental
    assert "incremental" not in unclaimed.as_dict()
    without_deltas = {k: v for k, v in outcome.items() if k != "deltas"}
    assert not judge(case, "bytes", without_deltas, 0.0, ends, claims_incremental=True).incremental
    over_http = judge(case, "bytes", buffered, 0.0, None, claims_incremental=True)
    assert over_http.verdict is Verdict.PASS and not over_http.incremental


def test_an_event_the_body_leaves_unclosed_may_be_kept_or_dropped() -> None:
    """semantics §3.6: a last event without its blank line is read either way; kept, its
    content surfaces in time at the end of the body."""
    from streamproof.harness.incremental import check_deltas

    first = b'data: {"choices":[{"index":0,"delta":{"content":"The end"}}]}\n\n'
    last = b'data: {"choices":[{"index":0,"delta":{"content":" is near."}}]}\n'
    body = first + last
    ends = [len(first), len(body)]
    kept = [
        {"choice": 0, "content": "The end", "at_byte": len(first)},
        {"choice": 0, "content": " is near.", "at_byte": len(body)},
    ]
    outcome = {"choices": [{"index": 0, "content": "The end is near."}]}
    assert check_deltas(body, ends, kept, outcome) is None
    dropped = {"choices": [{"index": 0, "content": "The end"}]}
    assert check_deltas(body, ends, kept[:1], dropped) is None
    late = [{"choice": 0, "content": "The end is near.", "at_byte": len(body)}]
    assert check_deltas(body, ends, late, outcome) is not None  # the first event was late
