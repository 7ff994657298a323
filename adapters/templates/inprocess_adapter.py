"""A template in-process Python adapter (copy and edit).

Run it with: streamproof run --adapter path/to/inprocess_adapter.py
"""

NAME = "my-parser"
VERSION = "0.0.1"
# Only what your parser really exposes; cases needing more are skipped.
CAPABILITIES = {"content", "finish_reason"}


class MyParser:
    """A stand-in for your parser: replace with the real one."""

    def __init__(self):
        self.text, self.finish_reason = "", None

    def feed(self, data):
        pass


def parse(response):
    """Drive the parser the way an application would; report what it exposed."""
    parser = MyParser()  # the parser under test
    for data in response.iter_bytes():  # one read at a time, as the transport cut it
        parser.feed(data)
    text, finish = parser.text, parser.finish_reason
    return {
        "status": "complete",
        "choices": [{"index": 0, "content": text, "finish_reason": finish}],
    }
