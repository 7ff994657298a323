"""A test adapter declaring a capability that does not exist."""

CAPABILITIES = {"content", "telepathy"}


def parse(response):
    return {"status": "complete"}
