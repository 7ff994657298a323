"""The application code that sits on top of an SSE-only library.

``httpx-sse``, ``sseclient-py`` and their like hand out events; turning each
event's JSON into an answer is what their documentation leaves to the
application, with ``json.loads`` per event. This is that code, kept to the
common pattern (text and finish reason per choice, the last usage, the first
id and model) so that what the SSE library does wrong shows through. It is
not a parser of bytes: it only reads the event data the library returned.
"""

from __future__ import annotations

import json
from typing import Any

CAPABILITIES = {
    "content",
    "role",
    "finish_reason",
    "usage",
    "multiple_choices",
    "metadata",
    "incremental",
}


class ChunkReader:
    def __init__(self, response: Any) -> None:
        self._response = response
        self.choices: dict[int, dict[str, Any]] = {}
        self.usage: Any = None
        self.id: Any = None
        self.model: Any = None
        self.deltas: list[dict[str, Any]] = []

    def data(self, data: str) -> bool:
        """Take one event's data; False once [DONE] arrived."""
        if data == "[DONE]":
            return False
        chunk = json.loads(data)
        self.id = self.id or chunk.get("id") or None  # "" is no id
        self.model = self.model or chunk.get("model") or None
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            state = self.choices.setdefault(
                choice.get("index", 0), {"content": "", "role": None, "finish_reason": None}
            )
            delta = choice.get("delta") or {}
            if delta.get("role"):
                state["role"] = delta["role"]
            if delta.get("content"):
                state["content"] += delta["content"]
                self.deltas.append(
                    {
                        "choice": choice.get("index", 0),
                        "content": delta["content"],
                        "at_byte": self._response.bytes_delivered,
                    }
                )
            if choice.get("finish_reason"):
                state["finish_reason"] = choice["finish_reason"]
        return True

    def outcome(self, status: str = "complete") -> dict[str, Any]:
        return {
            "status": status,
            "choices": [{"index": i, **self.choices[i]} for i in sorted(self.choices)],
            "usage": self.usage,
            "id": self.id,
            "model": self.model,
            "deltas": self.deltas,
        }
