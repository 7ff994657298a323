"""Stream lint as a library: each deviation from the OpenAI reference, named by its quirk.

Layer 4. ``scan`` finds SSE events and JSON keys with byte offsets,
``rules`` checks chunks, completions and error bodies, ``stream`` walks a
stream's events and ``across_chunks`` checks what only the whole stream
shows, ``report`` gathers the findings into a lint report with
severities from the quirk catalogue. Used by the ``lint`` command and the
provider report. May import ``corpus``, ``reference`` and the foundation
modules.
"""
