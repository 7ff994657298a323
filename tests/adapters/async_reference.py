"""A test adapter with `async def parse`, driving the reference reader."""

from streamproof.reference import ResponseReader

NAME = "async-reference"
VERSION = "1"


async def parse(response):
    reader = ResponseReader(response.status, response.headers, response.request)
    async for data in response.aiter_bytes():
        reader.feed(data)
    return reader.close()
