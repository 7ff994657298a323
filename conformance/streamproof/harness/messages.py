"""The messages the harness sends an adapter process (the protocol's harness side)."""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["run_message"]


def run_message(
    case_id: str,
    transport: str,
    status: int,
    headers: dict[str, str],
    request: dict[str, Any],
    body: bytes,
    ends: list[int],
    *,
    compact: bool = False,
) -> dict[str, Any]:
    """The ``run`` message of one case under one transport.

    ``compact`` (the worker said ``"compact_boundaries": true``): a read of
    every byte crosses as ``{"every": 1}`` instead of the list 1, 2, … len(body).
    """
    every_byte = compact and len(ends) == len(body) and (not ends or ends[-1] == len(body))
    return {
        "cmd": "run",
        "case": case_id,
        "transport": transport,
        "status": status,
        "headers": headers,
        "request": request,
        "body": base64.b64encode(body).decode("ascii"),
        "boundaries": {"every": 1} if every_byte else ends,
    }
