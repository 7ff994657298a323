"""A test adapter declaring content and finish_reason only: every other case is a skip."""

from streamproof.reference import ResponseReader

CAPABILITIES = {"content", "finish_reason"}


def parse(response):
    reader = ResponseReader(response.status, response.headers, response.request)
    for data in response.iter_bytes():
        reader.feed(data)
    return reader.close()
