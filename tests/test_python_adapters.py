"""The built-in Python adapters' translation, one small hand-written response at a time.

Each adapter is loaded by its built-in name and handed a ``ReplayResponse`` directly (no
worker process, no corpus). Every expected value is what the library under the adapter
exposes for that body, checked by hand against the library's code: where a library gets a
body wrong, the test pins what it does, and where it raises, the test names the exception
(a crash, which is a finding about the library, not a failure of the adapter). A test whose
library is missing is skipped with the extra that installs it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from streamproof.adapter import (
    CAPABILITIES,
    Adapter,
    AdapterError,
    ReplayResponse,
    load_adapter,
)
from streamproof.resources import data_path

# litellm fetches its model cost map over the network at import unless told not to. The
# adapter sets these before importing it; importorskip below may import it first.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

# adapter name -> (the extra that installs its library, the modules it imports)
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai-python": ("openai", ("httpx", "openai")),
    "openai-python-async": ("openai", ("httpx", "openai")),
    "httpx-sse": ("httpx-sse", ("httpx", "httpx_sse")),
    "sseclient-py": ("sseclient-py", ("sseclient",)),
    "litellm": ("litellm", ("httpx", "openai", "litellm")),
    "langchain-openai": ("langchain", ("httpx", "openai", "langchain_openai")),
    "recipe-requests": ("recipes", ("requests",)),
}
OPENAI = ["openai-python", "openai-python-async"]
SSE_ONLY = ["httpx-sse", "sseclient-py"]  # an SSE library under _chunk_reader.py
ALL = [*OPENAI, *SSE_ONLY, "litellm", "langchain-openai", "recipe-requests"]

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"

_loaded: dict[str, Adapter] = {}


def adapter(name: str) -> Adapter:
    """The built-in adapter ``name``, or a skip naming the extra its library comes with."""
    if name != "reference":
        extra, modules = EXTRAS[name]
        for module in modules:
            pytest.importorskip(
                module,
                reason=f"the {name} adapter needs {extra}: pip install 'streamproof[{extra}]'",
            )
    if name not in _loaded:
        _loaded[name] = load_adapter(name)
    return _loaded[name]


def run(name: str, response: ReplayResponse) -> Any:
    """``parse`` as the worker calls it, where a warning is not an exception.

    This suite turns warnings into errors, and litellm turns any exception raised inside its
    stream (one from a pydantic deprecation warning included) into an APIError.
    """
    loaded = adapter(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return loaded.run(response)


# --- the bodies ------------------------------------------------------------------------

SSE = {"content-type": "text/event-stream"}
JSON = {"content-type": "application/json"}
STREAM = {
    "model": "m-1",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}
USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def event(*choices: dict[str, Any], **fields: Any) -> bytes:
    """One ``data:`` event carrying a chunk with ``choices``."""
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m-1"}
    chunk.update(fields, choices=list(choices))
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def delta(finish_reason: str | None = None, index: int = 0, **fields: Any) -> dict[str, Any]:
    return {"index": index, "delta": fields, "finish_reason": finish_reason}


def respond(
    body: bytes,
    ends: list[int] | None = None,
    *,
    status: int = 200,
    headers: dict[str, str] = SSE,
    request: dict[str, Any] = STREAM,
) -> ReplayResponse:
    return ReplayResponse(
        status=status,
        headers=headers,
        request=request,
        case_id="test/python-adapters",
        transport="test",
        body=body,
        ends=ends or [len(body)],
    )


DONE = b"data: [DONE]\n\n"
HEL = event(delta(role="assistant", content="Hel"))
LO = event(delta("stop", content="lo"))
PLAIN = HEL + LO + event(usage=USAGE) + DONE
SPLIT = len(HEL) + 20  # the first read ends inside the second event
ERROR_EVENT = b'data: {"error":{"message":"overloaded","type":"server_error","code":"busy"}}\n\n'
IN_STREAM_ERROR = HEL + ERROR_EVENT + DONE
CORRUPT = HEL + b"data: {oops\n\n" + LO + DONE
CUT = HEL  # no finish reason, no [DONE]: the connection just ended
RATE_LIMITED = b'{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit"}}'
BAD_GATEWAY = b"<html><body>502 Bad Gateway</body></html>"
COMPLETION = json.dumps(
    {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "created": 1,
        "model": "m-2",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi there"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
    }
).encode()
NOT_STREAMED = {"model": "m-2", "messages": [{"role": "user", "content": "hi"}]}
TOOL_CALL = {"index": 0, "id": "call_1", "type": "function"}
TOOLS_AND_REASONING = (
    event(delta(role="assistant", reasoning_content="Think"))
    + event(delta(reasoning_content="ing."))
    + event(delta(tool_calls=[{**TOOL_CALL, "function": {"name": "weather", "arguments": ""}}]))
    + event(delta(tool_calls=[{"index": 0, "function": {"arguments": '{"city":'}}]))
    + event(delta(tool_calls=[{"index": 0, "function": {"arguments": '"Paris"}'}}]))
    + event(delta("tool_calls"))
    + DONE
)
WEATHER = {**TOOL_CALL, "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}
REFUSAL = (
    event(delta(role="assistant", content=None, refusal="I can"))
    + event(delta("stop", refusal="not."))
    + DONE
)
TWO_CHOICES = (  # n=2, interleaved, choice 0 first
    event(delta(index=0, role="assistant", content="A"))
    + event(delta(index=1, role="assistant", content="B"))
    + event(delta("length", index=1, content="b"))
    + event(delta("stop", index=0, content="a"))
    + DONE
)
CAFE = event(delta("stop", role="assistant", content="café")).replace(b"\\u00e9", "é".encode())


def deltas(*pieces: tuple[int, str, int]) -> list[dict[str, Any]]:
    return [{"choice": c, "content": text, "at_byte": at} for c, text, at in pieces]


def usage_is_estimated(usage: Any) -> bool:
    """litellm's token counts where no usage was sent (its tokenizer's, not the server's)."""
    counts = [usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")]
    return all(isinstance(n, int) and n >= 0 for n in counts) and counts[2] > 0


# --- what each adapter says about itself ----------------------------------------------


def test_every_built_in_python_adapter_is_tested_here() -> None:
    files = data_path("adapters").glob("*.py")
    names = {p.stem.replace("_", "-") for p in files if not p.name.startswith("_")}
    # The browser adapters run over HTTP only: tests/test_browser_adapters.py covers them.
    assert names == {*ALL, "reference", "browser-reader", "browser-eventsource-parser"}


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("openai-python", lambda: importlib.metadata.version("openai")),
        ("openai-python-async", lambda: importlib.metadata.version("openai")),
        ("httpx-sse", lambda: importlib.metadata.version("httpx-sse")),
        ("sseclient-py", lambda: importlib.metadata.version("sseclient-py")),
        ("litellm", lambda: importlib.metadata.version("litellm")),
        ("langchain-openai", lambda: importlib.metadata.version("langchain-openai")),
        ("recipe-requests", lambda: f"requests {importlib.metadata.version('requests')}"),
        ("reference", lambda: importlib.metadata.version("streamproof")),
    ],
)
def test_name_and_version_are_the_installed_library(name: str, version: Any) -> None:
    loaded = adapter(name)
    assert loaded.name == name
    assert loaded.version == version()


CHUNK_READER = {"content", "role", "finish_reason", "usage", "multiple_choices", "metadata"}
CLAIMED = {
    # Not truncation: the SDK never says whether a stream ended cleanly (test below).
    "openai-python": CAPABILITIES - {"truncation"},
    "openai-python-async": CAPABILITIES - {"truncation"},
    # Not refusal: stream_chunk_builder drops it. Not truncation: a cut stream is an error.
    "litellm": CAPABILITIES - {"truncation", "refusal"},
    # LangChain merges choices into one message and keeps no role, reasoning or refusal.
    "langchain-openai": {
        "content",
        "finish_reason",
        "usage",
        "tool_calls",
        "stream_error",
        "http_error",
        "non_streaming",
        "metadata",
        "incremental",
    },
    # httpx-sse raises SSEError on a response that is not text/event-stream; sseclient-py
    # reads any bytes as events. Neither parses JSON bodies or error objects.
    "httpx-sse": CHUNK_READER | {"incremental", "http_error"},
    "sseclient-py": CHUNK_READER | {"incremental"},
    "recipe-requests": {"content", "usage"},
    "reference": CAPABILITIES,
}


@pytest.mark.parametrize("name", sorted(CLAIMED))
def test_capabilities_are_what_the_library_exposes(name: str) -> None:
    assert adapter(name).capabilities == frozenset(CLAIMED[name])


@pytest.mark.parametrize("name", ALL)
def test_a_missing_library_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    extra, modules = EXTRAS[name]
    for module in modules:  # each import fails as if the extra were not installed
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(AdapterError) as excinfo:
        load_adapter(name)
    message = str(excinfo.value)
    assert "\n" not in message
    assert re.fullmatch(
        rf"{name}: cannot import: the [\w-]+ adapter needs [\w -]+ "
        rf"\(import of ({'|'.join(modules)}) halted; None in sys\.modules\); "
        rf"install it with: pip install 'streamproof\[{extra}\]'",
        message,
    ), message
    assert extra in declared_extras()


def declared_extras() -> list[str]:
    """The keys of pyproject.toml's [project.optional-dependencies] (no tomllib on 3.10)."""
    text = PYPROJECT.read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    return re.findall(r"^([\w-]+) = \[", section, flags=re.MULTILINE)


# --- a plain stream ----------------------------------------------------------------------

PLAIN_CHOICE = {
    "openai-python": {
        "index": 0,
        "role": "assistant",
        "content": "Hello",
        "refusal": None,
        "reasoning": None,
        "finish_reason": "stop",
        "tool_calls": [],
    },
    "httpx-sse": {"index": 0, "role": "assistant", "content": "Hello", "finish_reason": "stop"},
    "litellm": {
        "index": 0,
        "role": "assistant",
        "content": "Hello",
        "reasoning": None,
        "finish_reason": "stop",
        "tool_calls": [],
    },
    "langchain-openai": {"index": 0, "content": "Hello", "finish_reason": "stop", "tool_calls": []},
    "reference": {
        "index": 0,
        "role": "assistant",
        "content": "Hello",
        "reasoning": "",
        "refusal": "",
        "finish_reason": "stop",
        "tool_calls": [],
    },
}
PLAIN_CHOICE["openai-python-async"] = PLAIN_CHOICE["openai-python"]
PLAIN_CHOICE["sseclient-py"] = PLAIN_CHOICE["httpx-sse"]


@pytest.mark.parametrize("name", [*OPENAI, *SSE_ONLY, "litellm", "reference"])
def test_a_plain_stream_in_two_reads(name: str) -> None:
    outcome = run(name, respond(PLAIN, [SPLIT, len(PLAIN)]))
    if name == "litellm":  # stream_chunk_builder adds a completion_tokens_details of its own
        details = outcome["usage"].pop("completion_tokens_details", None)
        assert details in (None, {"reasoning_tokens": 0, "text_tokens": 2})
    if name == "reference":
        assert outcome.pop("error") is None
    assert outcome == {
        "status": "complete",
        "choices": [PLAIN_CHOICE[name]],
        "usage": USAGE,
        "id": "chatcmpl-1",
        "model": "m-1",
        # each piece at the end of the read that completed its event, none later
        "deltas": deltas((0, "Hel", SPLIT), (0, "lo", len(PLAIN))),
    }


def test_langchain_a_plain_stream_in_two_reads() -> None:
    outcome = run("langchain-openai", respond(PLAIN, [SPLIT, len(PLAIN)]))
    # usage_metadata translated back; model_name comes with the finish reason.
    assert outcome.pop("id") is None  # LangChain keeps no response id when streaming
    assert outcome == {
        "status": "complete",
        "choices": [PLAIN_CHOICE["langchain-openai"]],
        "usage": USAGE,
        "model": "m-1",
        "deltas": deltas((0, "Hel", SPLIT), (0, "lo", len(PLAIN))),
    }


def test_langchain_reports_usage_even_when_the_request_did_not_ask_for_it() -> None:
    request = {k: v for k, v in STREAM.items() if k != "stream_options"}
    assert run("langchain-openai", respond(PLAIN, request=request))["usage"] == USAGE


def test_langchain_streamed_id() -> None:
    outcome = run("langchain-openai", respond(PLAIN))
    assert outcome["id"] in (None, "chatcmpl-1")


def test_recipe_a_plain_stream() -> None:
    outcome = run("recipe-requests", respond(PLAIN, [SPLIT, len(PLAIN)]))
    assert outcome == {
        "status": "complete",
        "choices": [{"index": 0, "content": "Hello"}],
        "usage": USAGE,
    }


@pytest.mark.parametrize(
    ("content_type", "text"),
    [
        # requests gives text/* without a charset ISO-8859-1, as RFC 2616 said: mojibake
        ("text/event-stream", "cafÃ©"),
        ("text/event-stream; charset=utf-8", "café"),
    ],
)
def test_recipe_decodes_as_requests_does(content_type: str, text: str) -> None:
    outcome = run("recipe-requests", respond(CAFE, headers={"content-type": content_type}))
    assert outcome["choices"] == [{"index": 0, "content": text}]


@pytest.mark.parametrize("name", [*OPENAI, *SSE_ONLY, "litellm", "langchain-openai"])
def test_utf8_split_inside_a_character_comes_out_whole(name: str) -> None:
    inside = CAFE.index("é".encode()) + 1
    outcome = run(name, respond(CAFE, [inside, len(CAFE)]))
    assert outcome["choices"][0]["content"] == "café"
    assert outcome["deltas"] == deltas((0, "café", len(CAFE)))


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
    # str(exc) and status_code only: neither adapter reports the body's type or code
    assert outcome == {
        "status": "error",
        "choices": [],
        "error": {"http_status": 429},
        "deltas": [],
    }


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
        "error": {"message": "overloaded", "http_status": None},
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
        {"index": 0, "content": "", "finish_reason": "tool_calls", "tool_calls": [WEATHER]}
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
        # stream_chunk_builder keeps no refusal
        ("litellm", {**PLAIN_CHOICE["litellm"], "content": ""}),
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
        {"index": 0, "content": "ABba", "finish_reason": "lengthstop", "tool_calls": []}
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
