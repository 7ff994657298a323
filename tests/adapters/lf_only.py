"""A test adapter whose line splitter knows LF only (a CRLF loses its CR).

A lone CR, which WHATWG §9.2.6 counts as a line end, stays inside the line,
so a stream framed with CR runs its events together into corrupt JSON. The
fuzzer must find this and shrink it to one event.
"""

import re

from streamproof.reference import ResponseReader

NAME = "lf-only"


def parse(response):
    body = b"".join(response.iter_bytes())
    lines = [line[:-1] if line.endswith(b"\r") else line for line in body.split(b"\n")]
    # What is left of a CR is not a line end to this splitter.
    joined = re.sub(rb"\r", b" ", b"\n".join(lines))
    reader = ResponseReader(response.status, response.headers, response.request)
    reader.feed(joined)
    return reader.close()
