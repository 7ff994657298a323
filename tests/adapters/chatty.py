"""A test adapter that prints while it parses: a line per case, or 1 MB of noise."""

import sys

NAME = "chatty"


def parse(response):
    if response.case_id == "generic/finish-without-done":
        for _ in range(10):
            print("x" * 100_000)
    print(f"parsing {response.case_id}")
    print(f"warning from {response.case_id}", file=sys.stderr)
    return {"status": "complete", "choices": []}
