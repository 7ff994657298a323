"""A test adapter that prints to stdout: the protocol must not be disturbed."""

from streamproof.reference import read_response

NAME = "prints"


def parse(response):
    print("debug: {not protocol}")
    return read_response(response.status, response.headers, response.request, response.iter_bytes())
