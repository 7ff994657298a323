"""The parts of a chat completion choice beyond text that the Python libraries
type (docs/semantics.md §6.8 to §6.12), translated from the library's objects
for ``openai_python.py`` and ``litellm.py``.

Both hand out pydantic models, some of whose parts are plain dicts (a
streamed snapshot keeps an untyped ``custom`` in ``model_extra``; LiteLLM
types annotations as TypedDicts): each is read as it comes, nothing is
computed that the library did not.
"""

from __future__ import annotations

from typing import Any

__all__ = ["parts", "tool_call"]

_AUDIO_KEYS = ("id", "data", "transcript", "expires_at")


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _plain(value: Any) -> Any:
    """A model as the keys it was given (``exclude_unset``), a list element-wise."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_unset=True)
    return value


def tool_call(index: int, call: Any) -> dict[str, Any]:
    """A tool call as typed: ``function``, or for ``type: "custom"`` ``custom``."""
    found: dict[str, Any] = {"index": index, "id": _field(call, "id"), "type": _field(call, "type")}
    function, custom = _field(call, "function"), _field(call, "custom")
    if function is not None or custom is None:
        found["function"] = {
            "name": _field(function, "name"),
            "arguments": _field(function, "arguments"),
        }
    if custom is not None:
        found["custom"] = {"name": _field(custom, "name"), "input": _field(custom, "input")}
    return found


def parts(choice: Any, message: Any) -> dict[str, Any]:
    """The legacy function call, logprobs, audio and annotations of one choice;
    a part the library holds none of is left out (semantics §12.3)."""
    call, audio, logprobs = (
        _field(message, "function_call"),
        _field(message, "audio"),
        _field(choice, "logprobs"),
    )
    found = {
        "function_call": call
        and {"name": _field(call, "name"), "arguments": _field(call, "arguments")},
        "logprobs": logprobs
        and {
            "content": _plain(_field(logprobs, "content")),
            "refusal": _plain(_field(logprobs, "refusal")),
        },
        "audio": audio and {k: _field(audio, k) for k in _AUDIO_KEYS},
        "annotations": _plain(_field(message, "annotations")),
    }
    return {k: v for k, v in found.items() if v is not None}
