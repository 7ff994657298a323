"""Adapter for ``langchain-openai``: ``ChatOpenAI.stream`` and ``ChatOpenAI.generate``.

``ChatOpenAI`` gets an httpx client whose transport answers with the case's
reads. Streamed chunks are merged the way LangChain documents it, by adding
``AIMessageChunk`` objects; the finish reason, model and id come from the
message's ``response_metadata``, usage from ``usage_metadata`` (LangChain's
names, translated to the outcome's), a refusal from ``additional_kwargs``
(where ``_convert_dict_to_message`` puts it). A non-streamed body goes through
``generate``, whose ``LLMResult.generations`` holds one generation per choice
(``invoke`` returns the first of them). Errors translated: ``openai.APIError``,
which LangChain lets through from the SDK it wraps. Anything else is a crash.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

try:
    import httpx
    import openai
    from langchain_core.messages import convert_to_messages
    from langchain_openai import ChatOpenAI
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the langchain-openai adapter needs langchain-openai ({exc}); "
        "install it with: pip install 'streamproof[langchain]' "
        "(from a clone: pip install -e '.[langchain]')"
    ) from None

from streamproof.adapter import load_sibling

NAME = "langchain-openai"
VERSION = importlib.metadata.version("langchain-openai")
CAPABILITIES = {
    "content",
    "finish_reason",
    "usage",
    "tool_calls",
    "refusal",
    "multiple_choices",
    "stream_error",
    "http_error",
    "non_streaming",
    "metadata",
    "incremental",
    "function_call",
    "logprobs",
    "audio",
}
_http = load_sibling(__file__, "_httpx_replay.py")


def _model(response: Any) -> ChatOpenAI:
    request = response.request
    usage = (request.get("stream_options") or {}).get("include_usage") is True
    return ChatOpenAI(
        model=request.get("model", "model"),
        api_key="streamproof",
        base_url="http://streamproof.invalid/v1",
        max_retries=0,
        stream_usage=usage,
        http_client=httpx.Client(transport=_http.ReplayTransport(response)),
    )


def _messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's messages as given: LangChain takes OpenAI-format dicts."""
    return list(request.get("messages", []))


def _choice(message: Any, index: int) -> dict[str, Any]:
    meta = message.response_metadata or {}
    # Streamed: LangChain keeps the raw argument fragments in tool_call_chunks.
    # Invoked: the raw calls as the API sent them stay in additional_kwargs.
    raw = (message.additional_kwargs or {}).get("tool_calls") or []
    if getattr(message, "tool_call_chunks", None):
        calls = [
            {
                # LangChain keeps None for a call sent without an index: its position.
                "index": c["index"] if isinstance(c.get("index"), int) else i,
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c.get("name"), "arguments": c.get("args")},
            }
            for i, c in enumerate(message.tool_call_chunks)
        ]
    elif raw:
        calls = [
            {
                "index": i,
                "id": c.get("id"),
                "type": c.get("type"),
                "function": dict(c.get("function") or {}),
            }
            for i, c in enumerate(raw)
        ]
    else:  # only the parsed calls: LangChain keeps no raw argument string
        calls = [
            {
                "index": i,
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c.get("name"), "arguments": None},
            }
            for i, c in enumerate(message.tool_calls or [])
        ]
    content = message.content if isinstance(message.content, str) else ""
    extra = message.additional_kwargs or {}
    return {
        "index": index,
        "content": content,
        "refusal": extra.get("refusal"),
        "finish_reason": meta.get("finish_reason"),
        "tool_calls": calls,
        **_parts(extra, meta),
    }


def _parts(extra: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """Where langchain-openai keeps the legacy function call and the audio
    (``additional_kwargs``) and the logprobs (``response_metadata``), as it keeps
    them; a part it holds none of is left out (semantics §12.3)."""
    call, audio, logprobs = extra.get("function_call"), extra.get("audio"), meta.get("logprobs")
    found = {
        "function_call": call and {"name": call.get("name"), "arguments": call.get("arguments")},
        "logprobs": logprobs
        and {"content": logprobs.get("content"), "refusal": logprobs.get("refusal")},
        "audio": audio and {k: audio.get(k) for k in ("id", "data", "transcript", "expires_at")},
    }
    return {k: v for k, v in found.items() if v is not None}


def _outcome(message: Any, status: str = "complete", others: Any = ()) -> dict[str, Any]:
    """The outcome of ``message`` (choice 0) and of ``others``, the next choices."""
    meta = message.response_metadata or {}
    usage = message.usage_metadata
    if isinstance(meta.get("token_usage"), dict):
        usage_out: dict[str, Any] | None = meta["token_usage"]  # as the API sent it
    elif usage is not None:  # only LangChain's own counts
        usage_out = {
            "prompt_tokens": usage.get("input_tokens"),
            "completion_tokens": usage.get("output_tokens"),
            "total_tokens": usage.get("total_tokens"),
        }
    else:
        usage_out = None
    return {
        "status": status,
        "choices": [_choice(m, i) for i, m in enumerate([message, *others])],
        "usage": usage_out,
        # The response's id as LangChain keeps it (invoke: response_metadata);
        # message.id is LangChain's own run id, not the provider's.
        "id": meta.get("id"),
        "model": meta.get("model_name"),
    }


def parse(response: Any) -> dict[str, Any]:
    model = _model(response)
    messages = _messages(response.request)
    merged, deltas = None, []
    try:
        if response.request.get("stream") is not True:
            # What invoke does with OpenAI-format dicts: convert_to_messages.
            (generations,) = model.generate([convert_to_messages(messages)]).generations
            first, *others = [generation.message for generation in generations]
            return _outcome(first, others=others)
        for chunk in model.stream(messages):
            merged = chunk if merged is None else merged + chunk
            if isinstance(chunk.content, str) and chunk.content:
                deltas.append(
                    {"choice": 0, "content": chunk.content, "at_byte": response.bytes_delivered}
                )
        outcome = _outcome(merged) if merged is not None else {"status": "complete", "choices": []}
        return {**outcome, "deltas": deltas}
    except openai.APIError as exc:
        outcome = (
            _outcome(merged, "error") if merged is not None else {"status": "error", "choices": []}
        )
        # LangChain lets the SDK's exception through, with the error body it keeps.
        body = exc.body if isinstance(exc.body, dict) else {}
        code = body.get("code", exc.code)
        outcome["error"] = {
            "message": str(exc),
            "type": body.get("type"),
            "code": code if isinstance(code, (str, int)) and not isinstance(code, bool) else None,
            "http_status": getattr(exc, "status_code", None),
        }
        return {**outcome, "deltas": deltas}
