"""A test adapter around a parser that surfaces text only once the body is complete.

Its final text is right; its deltas all arrive at the last byte.
"""

from streamproof.reference import read_response

NAME = "buffers"


def parse(response):
    reads = list(response.iter_bytes())
    outcome = read_response(response.status, response.headers, response.request, reads)
    outcome["deltas"] = [
        {"choice": c["index"], "content": c["content"], "at_byte": response.bytes_delivered}
        for c in outcome["choices"]
        if c["content"]
    ]
    return outcome
