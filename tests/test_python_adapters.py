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
import re
import sys
from typing import Any

import pytest
from adapter_cases import (
    ALL,
    CAFE,
    EXTRAS,
    HELPERS,
    OPENAI,
    PLAIN,
    PLAIN_CHOICE,
    PYPROJECT,
    SPLIT,
    SSE_ONLY,
    STREAM,
    USAGE,
    adapter,
    deltas,
    respond,
    run,
)

from streamproof.harness.loader import (
    CAPABILITIES,
    AdapterError,
    load_adapter,
)
from streamproof.resources import data_path

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
        ("openai-python-helper", lambda: importlib.metadata.version("openai")),
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
    "openai-python-helper": CAPABILITIES - {"truncation"},
    # Message.refusal is LiteLLM's. Not truncation: a cut stream is an error.
    "litellm": CAPABILITIES - {"truncation"},
    # LangChain keeps a refusal in additional_kwargs and a choice per generation (generate),
    # but no role (a message class) and no reasoning (ChatOpenAI does not extract it);
    # the legacy function call and audio in additional_kwargs, logprobs in response_metadata.
    "langchain-openai": {
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
        rf"install it with: pip install 'streamproof\[{extra}\]' "
        rf"\(from a clone: pip install -e '\.\[{extra}\]'\)",
        message,
    ), message
    assert extra in declared_extras()


def declared_extras() -> list[str]:
    """The keys of pyproject.toml's [project.optional-dependencies] (no tomllib on 3.10)."""
    text = PYPROJECT.read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    return re.findall(r"^([\w-]+) = \[", section, flags=re.MULTILINE)


# --- a plain stream ----------------------------------------------------------------------


@pytest.mark.parametrize("name", [*OPENAI, *HELPERS, *SSE_ONLY, "litellm", "reference"])
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
