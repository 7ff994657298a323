"""Adapter for LiteLLM's OpenAI-compatible provider path (``litellm.completion``).

LiteLLM is called as an application calls it for an OpenAI-compatible server
(``model="openai/<name>"``, an ``api_base``), with an OpenAI client whose
httpx transport answers with the case's reads; LiteLLM's own stream wrapper
and its documented accumulator, ``litellm.stream_chunk_builder``, do the
rest. No retries and no network: the model cost map is the local copy.

Errors translated: LiteLLM's documented exceptions, which subclass
``openai.APIError`` (``litellm.BadRequestError``, ``RateLimitError``,
``APIConnectionError``, …). Anything else is a crash.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import
os.environ.setdefault("LITELLM_TELEMETRY", "False")
# LiteLLM counts tokens with a Hugging Face tokenizer for unknown model names
# and would try to download it: an application with no network says offline.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

try:
    import httpx
    import litellm
    import openai
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the litellm adapter needs litellm ({exc}); "
        "install it with: pip install 'streamproof[litellm]' "
        "(from a clone: pip install -e '.[litellm]')"
    ) from None

from streamproof.adapter import load_sibling

NAME = "litellm"
VERSION = importlib.metadata.version("litellm")
CAPABILITIES = {
    "content",
    "role",
    "finish_reason",
    "usage",
    "tool_calls",
    "reasoning",
    "refusal",
    "multiple_choices",
    "stream_error",
    "http_error",
    "non_streaming",
    "metadata",
    "incremental",
    "function_call",
    "custom_tool_calls",
    "logprobs",
    "audio",
    "annotations",
}
BASE_URL = "http://streamproof.invalid/v1"
_http = load_sibling(__file__, "_httpx_replay.py")
_parts = load_sibling(__file__, "_chat_parts.py")


def _client(response: Any) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="streamproof",
        base_url=BASE_URL,
        max_retries=0,
        http_client=httpx.Client(transport=_http.ReplayTransport(response)),
    )


def _outcome(result: Any, status: str = "complete") -> dict[str, Any]:
    choices = []
    for choice in result.choices:
        message = choice.message
        calls = [_parts.tool_call(i, c) for i, c in enumerate(message.tool_calls or [])]
        choices.append(
            {
                "index": choice.index,
                "role": message.role,
                "content": message.content,
                "reasoning": getattr(message, "reasoning_content", None),
                # Message.refusal (litellm/types/utils.py); LiteLLM deletes the
                # attribute when the response had none.
                "refusal": getattr(message, "refusal", None),
                "finish_reason": choice.finish_reason,
                "tool_calls": calls,
                **_parts.parts(choice, message),
            }
        )
    usage = getattr(result, "usage", None)
    return {
        "status": status,
        "choices": choices,
        "usage": usage.model_dump(exclude_none=True) if usage else None,
        "id": result.id,
        "model": result.model,
    }


def _drive(request: dict[str, Any], base_url: str, client: Any, response: Any) -> dict[str, Any]:
    request = dict(request)
    model = request.pop("model", "model")
    messages = request.pop("messages", [])
    stream = request.pop("stream", False) is True
    chunks: list[Any] = []
    deltas: list[dict[str, Any]] = []
    try:
        result = litellm.completion(
            model=f"openai/{model}",
            messages=messages,
            stream=stream,
            api_base=base_url,
            api_key="streamproof",
            max_retries=0,
            client=client,
            **request,
        )
        if not stream:
            return _outcome(result)
        for chunk in result:
            chunks.append(chunk)
            for choice in chunk.choices:
                if choice.delta.content and response is not None:
                    deltas.append(
                        {
                            "choice": choice.index,
                            "content": choice.delta.content,
                            "at_byte": response.bytes_delivered,
                        }
                    )
        built = litellm.stream_chunk_builder(chunks, messages=messages)
        outcome = _outcome(built) if built is not None else {"status": "complete", "choices": []}
        return {**outcome, "deltas": deltas}
    except openai.APIError as exc:
        outcome = {"status": "error", "choices": []}
        # The builder may be what raised: then LiteLLM has no snapshot to give.
        with contextlib.suppress(openai.APIError):
            built = litellm.stream_chunk_builder(chunks, messages=messages) if chunks else None
            if built is not None:
                outcome = _outcome(built, "error")
        outcome["error"] = {"message": str(exc), "http_status": getattr(exc, "status_code", None)}
        return {**outcome, "deltas": deltas}


def parse(response: Any) -> dict[str, Any]:
    return _drive(response.request, BASE_URL, _client(response), response)


def call(base_url: str, request: dict[str, Any]) -> dict[str, Any]:
    """Over real HTTP: LiteLLM's own client against streamproof's server."""
    return _drive(request, base_url, None, None)
