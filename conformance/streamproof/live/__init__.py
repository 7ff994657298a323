"""Real HTTP: the replay server, live recording, redaction and review.

Layer 6. ``serve`` replays the corpus on a socket (aiohttp, imported only
when a server starts), ``record`` captures a live response as a case,
``redact`` masks secrets in what was captured, ``review`` walks a person
through a recorded case before it counts. May import every layer below.
"""
