"""Adapter for the OpenAI Python SDK's helpers, ``chat.completions.stream()`` and ``.parse()``.

This is the helper the SDK's ``helpers.md`` shows: ``with
client.chat.completions.stream(...) as stream``, iterate its events, then
``stream.get_final_completion()``. It differs from the ``openai-python``
adapter (``create(stream=True)`` fed to ``ChatCompletionStreamState``): the
helper drops every chunk whose ``object`` is not ``"chat.completion.chunk"``
before accumulating, builds typed events from each chunk, and its final
completion goes through the SDK's parsing step, which raises for a
``length`` or ``content_filter`` finish reason. A request that does not ask
for a stream goes through the non-streamed twin of that helper,
``chat.completions.parse()``, which runs the same parsing step.

The case's bytes reach the SDK through the shared httpx replay transport; the
translation of a completion is the ``openai-python`` adapter's, loaded from
the file beside this one. Deltas are the content of each ``chunk`` event the
helper yields (the chunks it kept), with their choice index.

Errors translated, as the SDK documents them: ``openai.APIError`` (an HTTP
error status, an error event in the stream), and
``openai.LengthFinishReasonError`` / ``openai.ContentFilterFinishReasonError``
(raised by ``get_final_completion()``), each with the completion the helper
had accumulated. Anything else escapes and is a crash. The helper does not
say whether a stream ended cleanly (``truncation`` is not claimed).
"""

from __future__ import annotations

from typing import Any

try:
    import httpx
    import openai
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the openai-python-helper adapter needs the openai SDK ({exc}); "
        "install it with: pip install 'streamproof[openai]' "
        "(from a clone: pip install -e '.[openai]')"
    ) from None

from streamproof.adapter import load_sibling

_raw = load_sibling(__file__, "openai_python.py")
_http = load_sibling(__file__, "_httpx_replay.py")

NAME = "openai-python-helper"
VERSION = openai.__version__
CAPABILITIES = set(_raw.CAPABILITIES)
_FINISH_ERRORS = (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError)


def _finish_error(exc: openai.OpenAIError, deltas: list[dict[str, Any]]) -> dict[str, Any]:
    """The completion the parsing step refused, kept on the exception, and its message."""
    completion = getattr(exc, "completion", None)
    outcome = (
        _raw._outcome(completion, "error")
        if completion is not None
        else {"status": "error", "choices": []}
    )
    outcome["error"] = {"message": str(exc), "type": None, "code": None, "http_status": None}
    return {**outcome, "deltas": deltas}


def _drive(client: openai.OpenAI, request: dict[str, Any], response: Any) -> dict[str, Any]:
    stream, deltas = None, []
    try:
        if request.get("stream") is not True:
            return _raw._outcome(client.chat.completions.parse(**_raw._arguments(request)))
        with client.chat.completions.stream(**_raw._arguments(request)) as stream:
            for event in stream:
                if event.type == "chunk":
                    _raw._record(event.chunk, response, deltas)
            completion = stream.get_final_completion()
        return {**_raw._outcome(completion), "deltas": deltas}
    except openai.APIError as exc:
        return _raw._error(exc, stream, deltas)
    except _FINISH_ERRORS as exc:
        return _finish_error(exc, deltas)
    finally:
        client.close()


def parse(response: Any) -> dict[str, Any]:
    http = httpx.Client(transport=_http.ReplayTransport(response))
    client = openai.OpenAI(
        api_key="streamproof", base_url=_raw.BASE_URL, max_retries=0, http_client=http
    )
    return _drive(client, response.request, response)


def call(base_url: str, request: dict[str, Any]) -> dict[str, Any]:
    """Over real HTTP: the SDK's own httpx client against streamproof's server."""
    client = openai.OpenAI(api_key="streamproof", base_url=base_url, max_retries=0)
    return _drive(client, request, None)
