"""A test adapter returning an outcome that cannot cross the process boundary."""


def parse(response):
    return {"status": "complete", "choices": [{"index": 0, "content": {1, 2}}]}
