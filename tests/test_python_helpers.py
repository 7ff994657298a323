"""The openai-python-helper adapter, and the places the audit added to LiteLLM and LangChain.

``openai-python-helper`` drives ``client.chat.completions.stream()`` and
``get_final_completion()``; each expected value below is what that helper does with
the body, checked by hand against ``openai/lib/streaming/chat/_completions.py`` and
``openai/lib/_parsing/_completions.py``, beside what ``openai-python``
(``create(stream=True)`` into ``ChatCompletionStreamState``) does with the same bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from adapter_cases import (
    COMPLETION,
    DONE,
    HEL,
    IN_STREAM_ERROR,
    JSON,
    LO,
    NOT_STREAMED,
    PLAIN_CHOICE,
    RATE_LIMITED,
    TWO_CHOICES,
    USAGE,
    delta,
    deltas,
    event,
    respond,
    run,
)

HELPER = "openai-python-helper"
CHOICE = PLAIN_CHOICE[HELPER]

# Azure's asynchronous content filter sends chunks whose object is "", not
# "chat.completion.chunk"; the helper skips them (_is_valid_chat_completion_chunk_weak).
FOREIGN = event(delta(content="X"), object="")
WITH_FOREIGN_CHUNK = HEL + FOREIGN + LO + DONE
LENGTH = HEL + event(delta("length", content="lo")) + DONE
CONTENT_FILTER = HEL + event(delta("content_filter", content="lo")) + event(usage=USAGE) + DONE


def test_the_helper_skips_chunks_that_are_not_chat_completion_chunks() -> None:
    helper = run(HELPER, respond(WITH_FOREIGN_CHUNK))
    raw = run("openai-python", respond(WITH_FOREIGN_CHUNK))
    assert helper["choices"] == [CHOICE]
    assert raw["choices"] == [{**CHOICE, "content": "HelXlo"}]
    end = len(WITH_FOREIGN_CHUNK)
    assert helper["deltas"] == deltas((0, "Hel", end), (0, "lo", end))  # no "X" either


@pytest.mark.parametrize(
    ("body", "finish_reason", "message", "usage"),
    [
        (LENGTH, "length", "the length limit was reached", None),
        (CONTENT_FILTER, "content_filter", "rejected by the content filter", USAGE),
    ],
)
def test_get_final_completion_raises_for_length_and_content_filter(
    body: bytes, finish_reason: str, message: str, usage: Any
) -> None:
    # parse_chat_completion raises LengthFinishReasonError / ContentFilterFinishReasonError
    # whatever the request asked; the adapter keeps the completion the exception carries.
    outcome = run(HELPER, respond(body))
    assert outcome["status"] == "error"
    assert message in outcome["error"]["message"]
    assert outcome["error"]["http_status"] is None
    assert outcome["choices"] == [{**CHOICE, "finish_reason": finish_reason}]
    assert outcome["usage"] == usage
    # the raw stream's accumulator raises nothing for the same bytes
    assert run("openai-python", respond(body))["status"] == "complete"


def test_a_non_streamed_body_goes_through_parse() -> None:
    outcome = run(HELPER, respond(COMPLETION, headers=JSON, request=NOT_STREAMED))
    assert outcome == run("openai-python", respond(COMPLETION, headers=JSON, request=NOT_STREAMED))
    assert outcome["choices"] == [{**CHOICE, "content": "Hi there"}]
    # parse() runs the same parsing step as get_final_completion(): "length" raises
    body = json.loads(COMPLETION)
    body["choices"][0]["finish_reason"] = "length"
    refused = run(HELPER, respond(json.dumps(body).encode(), headers=JSON, request=NOT_STREAMED))
    assert refused["status"] == "error"
    assert refused["choices"] == [{**CHOICE, "content": "Hi there", "finish_reason": "length"}]
    assert refused["usage"] == {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}


def test_an_http_error_leaves_no_choice() -> None:
    outcome = run(HELPER, respond(RATE_LIMITED, status=429, headers=JSON))
    assert outcome["status"] == "error" and outcome["choices"] == []
    assert outcome["error"]["http_status"] == 429
    assert (outcome["error"]["type"], outcome["error"]["code"]) == ("requests", "rate_limit")


def test_an_error_object_in_the_stream_keeps_the_text() -> None:
    outcome = run(HELPER, respond(IN_STREAM_ERROR))
    assert outcome["status"] == "error"
    assert outcome["error"]["message"] == "overloaded"
    assert outcome["choices"] == [{**CHOICE, "content": "Hel", "finish_reason": None}]
    assert outcome["deltas"] == deltas((0, "Hel", len(IN_STREAM_ERROR)))


def test_two_choices_keep_their_index() -> None:
    outcome = run(HELPER, respond(TWO_CHOICES))
    # choice 1 finished with "length": the final completion is refused, the choices kept
    assert outcome["status"] == "error"
    assert [(c["index"], c["content"]) for c in outcome["choices"]] == [(0, "Aa"), (1, "Bb")]
    assert [d["choice"] for d in outcome["deltas"]] == [0, 1, 1, 0]


# Over real HTTP (call): the same verdicts as in-process, a crash of the helper included.
HTTP_CASES = [
    "generic/finish-without-done",
    "generic/http-429-json",
    "openai/error-object-mid-stream",
    "openai/finish-length",
    "generic/json-split-mid-object-across-reads",
]


def test_call_over_http_gives_the_in_process_verdicts(tmp_path: Path) -> None:
    verdicts = []
    for extra in ([], ["--http"]):
        out = tmp_path / f"out{len(extra)}.json"
        cases = [arg for case in HTTP_CASES for arg in ("--case", case)]
        command = [sys.executable, "-m", "streamproof", "run", "--adapter", HELPER]
        command += ["--transport", "whole", *cases, *extra, "--json", str(out)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 1, proc.stderr
        results = json.loads(out.read_text(encoding="utf-8"))["results"]
        verdicts.append({r["case"]: r["verdict"] for r in results})
    assert verdicts[0] == verdicts[1]
    assert verdicts[1]["openai/finish-length"] == "fail"  # LengthFinishReasonError
    assert verdicts[1]["generic/json-split-mid-object-across-reads"] == "crash"


# --- the places the audit found in LiteLLM and LangChain --------------------------------

TWO_COMPLETION_CHOICES = json.loads(COMPLETION)
TWO_COMPLETION_CHOICES["choices"].append(
    {
        "index": 1,
        "message": {"role": "assistant", "content": None, "refusal": "I cannot."},
        "finish_reason": "stop",
    }
)
TWO_BODY = json.dumps(TWO_COMPLETION_CHOICES).encode()


def test_langchain_generate_reports_every_choice_and_its_refusal() -> None:
    outcome = run("langchain-openai", respond(TWO_BODY, headers=JSON, request=NOT_STREAMED))
    base = PLAIN_CHOICE["langchain-openai"]
    assert outcome["choices"] == [
        {**base, "content": "Hi there"},
        # _convert_dict_to_message keeps the refusal in additional_kwargs
        {**base, "index": 1, "content": "", "refusal": "I cannot."},
    ]
    # With two generations LangChain merges llm_output into neither message: no id, no model.
    assert (outcome["id"], outcome["model"]) == (None, None)


def test_litellm_reports_the_refusal_of_a_non_streamed_body() -> None:
    body = json.loads(COMPLETION)
    body["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "No."}
    outcome = run("litellm", respond(json.dumps(body).encode(), headers=JSON, request=NOT_STREAMED))
    assert outcome["choices"][0]["refusal"] == "No."
