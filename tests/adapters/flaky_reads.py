"""A test adapter that fails for some chunkings only.

It is the reference parser, except that it raises when the body's first read
is 2 or 3 bytes long. ``whole``, ``lines`` and ``bytes`` never cut a first
read of that size from the corpus's bodies; ``random`` does under some seeds
and not others, so a case can fail under seed 2 and pass under seed 1: the
shape of a real parser's chunking bug, deterministic for a given seed.
"""

from streamproof.reference import ResponseReader

NAME = "flaky-reads"
VERSION = "1"


def parse(response):
    reader = ResponseReader(response.status, response.headers, response.request)
    first = None
    for data in response.iter_bytes():
        if first is None:
            first = len(data)
        reader.feed(data)
    if first in (2, 3):
        raise ValueError(f"a first read of {first} bytes")
    return reader.close()
