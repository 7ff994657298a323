"""A test adapter that returns a list instead of an outcome object."""


def parse(response):
    return [len(b) for b in response.iter_bytes()]
