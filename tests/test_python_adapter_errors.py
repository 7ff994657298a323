"""The Python adapters on errors, corrupt events and non-streamed bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from adapter_cases import (
    BAD_GATEWAY,
    COMPLETION,
    CORRUPT,
    CUT,
    IN_STREAM_ERROR,
    JSON,
    NOT_STREAMED,
    OPENAI,
    PLAIN,
    PLAIN_CHOICE,
    RATE_LIMITED,
    REFUSAL,
    SSE_ONLY,
    TOOLS_AND_REASONING,
    TWO_CHOICES,
    WEATHER,
    adapter,
    delta,
    deltas,
    event,
    respond,
    run,
    usage_is_estimated,
)

# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPENAI)
def test_openai_http_429(name: str) -> None:
    outcome = run(name, respond(RATE_LIMITED, status=429, headers=JSON))
    message = outcome["error"].pop("message")
    assert "Rate limit reached" in message  # "Error code: 429 - Rate limit reached"
    assert outcome == {
        "status": "error",
        "choices": [],
        "error": {"type": "requests", "code": "rate_limit", "http_status": 429},
        "deltas": [],
    }


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("litellm", "litellm.RateLimitError: "),
        ("langchain-openai", "Error code: 429 - "),  # the SDK's message, through LangChain
    ],
)
def test_wrapper_http_429(name: str, shown: str) -> None:
    outcome = run(name, respond(RATE_LIMITED, status=429, headers=JSON))
    message = outcome["error"].pop("message")
    assert shown in message
    assert "Rate limit reached" in message
    # litellm keeps no error body; LangChain lets the SDK's exception and its body through
    error = {"http_status": 429}
    if name == "langchain-openai":
        error = {"type": "requests", "code": "rate_limit", "http_status": 429}
    assert outcome == {"status": "error", "choices": [], "error": error, "deltas": []}


def test_httpx_sse_http_429_is_its_content_type_error() -> None:
    outcome = run("httpx-sse", respond(RATE_LIMITED, status=429, headers=JSON))
    assert outcome == {
        "status": "error",
        "choices": [],
        "usage": None,
        "id": None,
        "model": None,
        "deltas": [],
        "error": {
            "message": "Expected response header Content-Type to contain 'text/event-stream', "
            "got 'application/json': " + RATE_LIMITED.decode(),
            "type": "requests",
            "code": "rate_limit",
            "http_status": 429,
        },
    }


def test_httpx_sse_never_looks_at_the_status_of_an_event_stream() -> None:
    outcome = run("httpx-sse", respond(PLAIN, status=503))
    assert outcome["status"] == "complete"
    assert outcome["choices"][0]["content"] == "Hello"


@pytest.mark.parametrize("name", [*OPENAI, "litellm", "langchain-openai", "httpx-sse"])
def test_http_502_with_an_html_page(name: str) -> None:
    outcome = run(name, respond(BAD_GATEWAY, status=502, headers={"content-type": "text/html"}))
    assert outcome["status"] == "error"
    assert outcome["choices"] == []
    assert outcome["error"]["http_status"] == 502


@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        # sseclient-py reads the JSON line as an unknown field: no event at all
        (
            "sseclient-py",
            {
                "status": "complete",
                "choices": [],
                "usage": None,
                "id": None,
                "model": None,
                "deltas": [],
            },
        ),
        # the recipe never checks the status: no "data: " line, no text
        (
            "recipe-requests",
            {"status": "complete", "choices": [{"index": 0, "content": ""}], "usage": None},
        ),
    ],
)
def test_http_429_without_http_error(name: str, outcome: dict[str, Any]) -> None:
    assert "http_error" not in adapter(name).capabilities
    assert run(name, respond(RATE_LIMITED, status=429, headers=JSON)) == outcome


@pytest.mark.parametrize("name", OPENAI)
def test_openai_error_object_in_a_200_stream_keeps_the_text(name: str) -> None:
    outcome = run(name, respond(IN_STREAM_ERROR))
    assert outcome == {
        "status": "error",
        "choices": [{**PLAIN_CHOICE[name], "content": "Hel", "finish_reason": None}],
        "usage": None,
        "id": "chatcmpl-1",
        "model": "m-1",
        "error": {
            "message": "overloaded",
            "type": "server_error",
            "code": "busy",
            "http_status": None,
        },
        "deltas": deltas((0, "Hel", len(IN_STREAM_ERROR))),
    }


def test_litellm_error_object_in_a_200_stream_keeps_the_text() -> None:
    outcome = run("litellm", respond(IN_STREAM_ERROR))
    error = outcome.pop("error")
    assert "MidStreamFallbackError" in error["message"]
    assert "overloaded" in error["message"]
    # litellm's own status for a failure mid-stream, though the response was a 200
    assert error["http_status"] == 500
    # stream_chunk_builder makes up what the stream never sent: a finish reason, and
    # token counts of its own (usage_is_estimated)
    usage = outcome.pop("usage")
    assert usage_is_estimated(usage)
    assert outcome == {
        "status": "error",
        "choices": [{**PLAIN_CHOICE["litellm"], "content": "Hel", "finish_reason": "stop"}],
        "id": "chatcmpl-1",
        "model": "m-1",
        "deltas": deltas((0, "Hel", len(IN_STREAM_ERROR))),
    }


def test_langchain_error_object_in_a_200_stream_keeps_the_text() -> None:
    outcome = run("langchain-openai", respond(IN_STREAM_ERROR))
    outcome.pop("id")
    assert outcome == {
        "status": "error",
        "choices": [{**PLAIN_CHOICE["langchain-openai"], "content": "Hel", "finish_reason": None}],
        "usage": None,
        "model": None,  # LangChain keeps the model only from the chunk with a finish reason
        "error": {
            "message": "overloaded",
            "type": "server_error",
            "code": "busy",
            "http_status": None,
        },
        "deltas": deltas((0, "Hel", len(IN_STREAM_ERROR))),
    }


@pytest.mark.parametrize("name", [*SSE_ONLY, "recipe-requests"])
def test_error_object_in_a_200_stream_without_stream_error(name: str) -> None:
    # to the chunk reader and the recipe, the error object is a chunk without choices:
    # ignored, and [DONE] then ends the stream
    assert "stream_error" not in adapter(name).capabilities
    outcome = run(name, respond(IN_STREAM_ERROR))
    assert outcome["status"] == "complete"
    assert outcome["choices"][0]["content"] == "Hel"
    assert "error" not in outcome


# --- a corrupt event ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "raised_in"),
    [
        ("openai-python", "_streaming.py"),  # the SDK's Stream: sse.json()
        ("openai-python-async", "_streaming.py"),
        ("langchain-openai", "_streaming.py"),  # the same SDK under LangChain
        ("httpx-sse", "_chunk_reader.py"),  # the application's json.loads per event
        ("sseclient-py", "_chunk_reader.py"),
        ("recipe-requests", "recipe_requests.py"),  # the recipe's json.loads
    ],
)
def test_a_corrupt_event_escapes_as_json_decode_error(name: str, raised_in: str) -> None:
    with pytest.raises(json.JSONDecodeError) as excinfo:
        run(name, respond(CORRUPT))
    assert excinfo.value.doc == "{oops"
    outside_json = [e for e in excinfo.traceback if "json" not in Path(str(e.path)).parts]
    assert Path(str(outside_json[-1].path)).name == raised_in


def test_litellm_a_corrupt_event_is_an_api_error() -> None:
    # litellm wraps the JSONDecodeError as APIConnectionError, then MidStreamFallbackError
    outcome = run("litellm", respond(CORRUPT))
    assert outcome["status"] == "error"
    assert "Expecting property name enclosed in double quotes" in outcome["error"]["message"]
    assert outcome["error"]["http_status"] == 500
    assert outcome["choices"][0]["content"] == "Hel"  # nothing after the corrupt event
    assert outcome["deltas"] == deltas((0, "Hel", len(CORRUPT)))


# --- a non-streamed body -----------------------------------------------------------------


@pytest.mark.parametrize("name", [*OPENAI, "litellm"])
def test_a_non_streamed_body(name: str) -> None:
    outcome = run(name, respond(COMPLETION, headers=JSON, request=NOT_STREAMED))
    choice = {**PLAIN_CHOICE[name], "content": "Hi there"}
    assert outcome == {
        "status": "complete",
        "choices": [choice],
        "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
        "id": "chatcmpl-9",
        "model": "m-2",
    }


def test_langchain_a_non_streamed_body() -> None:
    outcome = run("langchain-openai", respond(COMPLETION, headers=JSON, request=NOT_STREAMED))
    # token_usage is the SDK's model_dump: the fields the body lacked come as None
    usage = {k: v for k, v in outcome.pop("usage").items() if v is not None}
    assert usage == {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}
    assert outcome == {
        "status": "complete",
        "choices": [{**PLAIN_CHOICE["langchain-openai"], "content": "Hi there"}],
        "id": "chatcmpl-9",
        "model": "m-2",
    }


def test_httpx_sse_a_non_streamed_body_is_its_content_type_error() -> None:
    outcome = run("httpx-sse", respond(COMPLETION, headers=JSON, request=NOT_STREAMED))
    assert (outcome["status"], outcome["error"]["http_status"]) == ("error", 200)
    assert "got 'application/json'" in outcome["error"]["message"]


@pytest.mark.parametrize(
    ("name", "choices"),
    [("sseclient-py", []), ("recipe-requests", [{"index": 0, "content": ""}])],
)
def test_a_non_streamed_body_without_non_streaming(name: str, choices: list[Any]) -> None:
    assert "non_streaming" not in adapter(name).capabilities
    outcome = run(name, respond(COMPLETION, headers=JSON, request=NOT_STREAMED))
    assert (outcome["status"], outcome["choices"]) == ("complete", choices)


# --- tool calls, reasoning, refusal, several choices --------------------------------------


@pytest.mark.parametrize("name", [*OPENAI, "litellm"])
def test_tool_calls_and_reasoning(name: str) -> None:
    outcome = run(name, respond(TOOLS_AND_REASONING))
    choice = {
        **PLAIN_CHOICE[name],
        "content": None,
        "reasoning": "Thinking.",
        "finish_reason": "tool_calls",
        "tool_calls": [WEATHER],
    }
    assert outcome["choices"] == [choice]
    assert outcome["deltas"] == []
    if name == "litellm":
        assert usage_is_estimated(outcome["usage"])  # none was sent
    else:
        assert outcome["usage"] is None


def test_langchain_tool_calls_without_reasoning() -> None:
    outcome = run("langchain-openai", respond(TOOLS_AND_REASONING))
    assert outcome["choices"] == [
        {
            "index": 0,
            "content": "",
            "refusal": None,
            "finish_reason": "tool_calls",
            "tool_calls": [WEATHER],
        }
    ]


@pytest.mark.parametrize("name", [*SSE_ONLY, "recipe-requests"])
def test_tool_calls_and_reasoning_without_the_capabilities(name: str) -> None:
    outcome = run(name, respond(TOOLS_AND_REASONING))
    assert not {"tool_calls", "reasoning"} & adapter(name).capabilities
    assert outcome["choices"][0]["content"] == ""
    assert not {"tool_calls", "reasoning"} & set(outcome["choices"][0])


@pytest.mark.parametrize(
    ("name", "choice"),
    [
        (
            "openai-python",
            {**PLAIN_CHOICE["openai-python"], "content": None, "refusal": "I cannot."},
        ),
        (
            "openai-python-async",
            {**PLAIN_CHOICE["openai-python"], "content": None, "refusal": "I cannot."},
        ),
        # LiteLLM's stream passes the refusal of the chunk that carries the role and drops
        # the next one ("not."): stream_chunk_builder joins what it was given
        ("litellm", {**PLAIN_CHOICE["litellm"], "content": "", "refusal": "I can"}),
        # a streamed refusal never reaches the message: _convert_delta_to_message_chunk
        # keeps no refusal key
        ("langchain-openai", {**PLAIN_CHOICE["langchain-openai"], "content": ""}),
    ],
)
def test_refusal(name: str, choice: dict[str, Any]) -> None:
    assert run(name, respond(REFUSAL))["choices"] == [choice]


@pytest.mark.parametrize("name", [*OPENAI, *SSE_ONLY, "litellm"])
def test_two_interleaved_choices(name: str) -> None:
    outcome = run(name, respond(TWO_CHOICES))
    first = {**PLAIN_CHOICE[name], "content": "Aa"}
    second = {**PLAIN_CHOICE[name], "index": 1, "content": "Bb", "finish_reason": "length"}
    if name == "litellm":
        # litellm's stream holds finish reasons back and sends only the last one, in a chunk
        # of its own for choice 0; stream_chunk_builder then fills in "stop" for choice 1
        second["finish_reason"] = "stop"
    assert outcome["choices"] == [first, second]
    end = len(TWO_CHOICES)
    assert outcome["deltas"] == deltas((0, "A", end), (1, "B", end), (1, "b", end), (0, "a", end))


@pytest.mark.parametrize("name", OPENAI)
def test_openai_choice_1_before_choice_0_crashes_the_stream_state(name: str) -> None:
    # ChatCompletionStreamState builds its first snapshot as choices[index] = ... on a list
    # of one: a first chunk for choice 1 alone is an IndexError
    body = event(delta(index=1, role="assistant", content="B")) + TWO_CHOICES
    with pytest.raises(IndexError):
        run(name, respond(body))


def test_langchain_merges_choices_into_one_message() -> None:
    outcome = run("langchain-openai", respond(TWO_CHOICES))
    # AIMessageChunk addition concatenates the text and the metadata strings alike
    assert outcome["choices"] == [
        {
            "index": 0,
            "content": "ABba",
            "refusal": None,
            "finish_reason": "lengthstop",
            "tool_calls": [],
        }
    ]
    assert outcome["model"] == "m-1m-1"


def test_recipe_reads_only_the_first_choice_of_each_chunk() -> None:
    outcome = run("recipe-requests", respond(TWO_CHOICES))
    assert outcome["choices"] == [{"index": 0, "content": "ABba"}]


# --- a stream that was cut off -----------------------------------------------------------


@pytest.mark.parametrize("name", [*OPENAI, *SSE_ONLY, "langchain-openai", "recipe-requests"])
def test_a_cut_off_stream_is_complete_without_truncation(name: str) -> None:
    assert "truncation" not in adapter(name).capabilities
    outcome = run(name, respond(CUT))
    assert outcome["status"] == "complete"
    assert outcome["choices"][0]["content"] == "Hel"


def test_litellm_a_cut_off_stream_is_an_error() -> None:
    outcome = run("litellm", respond(CUT))
    assert outcome["status"] == "error"
    assert "Stream ended before a finish_reason was received" in outcome["error"]["message"]
    # finish_reason "stop" and the usage: stream_chunk_builder's, the stream sent neither
    assert outcome["choices"] == [{**PLAIN_CHOICE["litellm"], "content": "Hel"}]
    assert usage_is_estimated(outcome["usage"])
