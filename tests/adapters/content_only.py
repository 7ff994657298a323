"""A test adapter declaring only the content capability."""

from streamproof.reference import ResponseReader

CAPABILITIES = {"content"}


def parse(response):
    reader = ResponseReader(response.status, response.headers, response.request)
    for data in response.iter_bytes():
        reader.feed(data)
    return reader.close()
