"""Adapter for the official OpenAI Python SDK (the ``openai`` package).

The case's bytes reach the SDK through an httpx transport, so its own SSE
decoder, ``Stream`` class and error mapping run on them. Streams go through
``chat.completions.create(stream=True)`` and the SDK's own accumulator,
``ChatCompletionStreamState`` (its documented helper for building a
completion out of chunks); bodies through ``chat.completions.create()``.
``openai-python-async`` drives ``AsyncOpenAI`` the same way.

Errors translated, as the SDK documents them: ``openai.APIStatusError`` (an
HTTP error status) and ``openai.APIError`` (an error event in a stream, or a
body the SDK rejects). Anything else escapes and is a crash. The SDK does not
say whether a stream ended cleanly, so ``truncation`` is not claimed.
"""

from __future__ import annotations

import contextlib
from typing import Any

try:
    import httpx
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the openai-python adapter needs the openai SDK ({exc}); "
        "install it with: pip install 'streamproof[openai]' "
        "(from a clone: pip install -e '.[openai]')"
    ) from None

from streamproof.adapter import load_sibling

NAME = "openai-python"
VERSION = openai.__version__
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
_KNOWN = ("model", "messages", "stream")
_http = load_sibling(__file__, "_httpx_replay.py")
_parts = load_sibling(__file__, "_chat_parts.py")


def _arguments(request: dict[str, Any]) -> dict[str, Any]:
    extra = {k: v for k, v in request.items() if k not in _KNOWN}
    return {
        "model": request.get("model", "model"),
        "messages": request.get("messages", []),
        "extra_body": extra,
    }


def _choices(completion: Any) -> list[dict[str, Any]]:
    choices = []
    for choice in completion.choices:
        message = choice.message
        extra = message.model_extra or {}
        calls = [_parts.tool_call(i, c) for i, c in enumerate(message.tool_calls or [])]
        choices.append(
            {
                "index": choice.index,
                "role": message.role,
                "content": message.content,
                "refusal": message.refusal,
                "finish_reason": choice.finish_reason,
                "reasoning": extra.get("reasoning_content") or extra.get("reasoning"),
                "tool_calls": calls,
                **_parts.parts(choice, message),
            }
        )
    return choices


def _outcome(completion: Any, status: str = "complete") -> dict[str, Any]:
    usage = completion.usage.model_dump(exclude_unset=True) if completion.usage else None
    return {
        "status": status,
        "choices": _choices(completion),
        "usage": usage,
        "id": completion.id,
        "model": completion.model,
    }


def _error_fields(exc: openai.APIError) -> dict[str, Any]:
    """The message, and the type and code as the error body the SDK keeps (``exc.body``)
    sent them; ``exc.code`` is the SDK's string form of the code."""
    body = exc.body if isinstance(exc.body, dict) else {}
    code = body.get("code", exc.code)
    return {
        "message": exc.message,
        "type": body.get("type"),
        "code": code if isinstance(code, (str, int)) and not isinstance(code, bool) else None,
    }


def _error(
    exc: openai.APIError, state: ChatCompletionStreamState[Any] | None, deltas: list[dict[str, Any]]
) -> dict[str, Any]:
    outcome: dict[str, Any] = {"status": "error", "choices": []}
    if state is not None:
        # The SDK has no snapshot (it asserts) before the first chunk.
        with contextlib.suppress(AssertionError):
            outcome = _outcome(state.current_completion_snapshot, "error")
    outcome["error"] = {**_error_fields(exc), "http_status": getattr(exc, "status_code", None)}
    outcome["deltas"] = deltas
    return outcome


def _record(chunk: Any, response: Any, deltas: list[dict[str, Any]]) -> None:
    """What an application shows as it streams: each chunk's ``delta.content``."""
    if response is None:  # over real HTTP nobody counts the bytes: no deltas
        return
    for choice in chunk.choices:
        if choice.delta.content:
            deltas.append(
                {
                    "choice": choice.index,
                    "content": choice.delta.content,
                    "at_byte": response.bytes_delivered,
                }
            )


def _drive(client: openai.OpenAI, request: dict[str, Any], response: Any) -> dict[str, Any]:
    state, deltas = None, []
    try:
        if request.get("stream") is not True:
            return _outcome(client.chat.completions.create(**_arguments(request)))
        state = ChatCompletionStreamState()
        for chunk in client.chat.completions.create(**_arguments(request), stream=True):
            state.handle_chunk(chunk)
            _record(chunk, response, deltas)
        return {**_outcome(state.current_completion_snapshot), "deltas": deltas}
    except openai.APIError as exc:
        return _error(exc, state, deltas)
    finally:
        client.close()


async def _adrive(
    client: openai.AsyncOpenAI, request: dict[str, Any], response: Any
) -> dict[str, Any]:
    state, deltas = None, []
    try:
        if request.get("stream") is not True:
            return _outcome(await client.chat.completions.create(**_arguments(request)))
        state = ChatCompletionStreamState()
        stream = await client.chat.completions.create(**_arguments(request), stream=True)
        async for chunk in stream:
            state.handle_chunk(chunk)
            _record(chunk, response, deltas)
        return {**_outcome(state.current_completion_snapshot), "deltas": deltas}
    except openai.APIError as exc:
        return _error(exc, state, deltas)
    finally:
        await client.close()


def parse(response: Any) -> dict[str, Any]:
    http = httpx.Client(transport=_http.ReplayTransport(response))
    client = openai.OpenAI(
        api_key="streamproof", base_url=BASE_URL, max_retries=0, http_client=http
    )
    return _drive(client, response.request, response)


async def parse_async(response: Any) -> dict[str, Any]:
    http = httpx.AsyncClient(transport=_http.ReplayTransport(response))
    client = openai.AsyncOpenAI(
        api_key="streamproof", base_url=BASE_URL, max_retries=0, http_client=http
    )
    return await _adrive(client, response.request, response)


def call(base_url: str, request: dict[str, Any]) -> dict[str, Any]:
    """Over real HTTP: the SDK's own httpx client against streamproof's server."""
    client = openai.OpenAI(api_key="streamproof", base_url=base_url, max_retries=0)
    return _drive(client, request, None)


async def call_async(base_url: str, request: dict[str, Any]) -> dict[str, Any]:
    client = openai.AsyncOpenAI(api_key="streamproof", base_url=base_url, max_retries=0)
    return await _adrive(client, request, None)
