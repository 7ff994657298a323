"""Adapter "browser-reader": the fetch + TextDecoderStream + getReader() loop, in Chromium.

The parser under test is the loop below, run inside headless Chromium against
streamproof's replay server, written fresh after the one the tutorial seed
document describes for a web page: ``fetch`` POST, a ``res.ok`` check that
throws on a failure before the stream, ``res.body.pipeThrough(new
TextDecoderStream())`` read with ``getReader()``, a buffer split on ``"\\n"``
that keeps the last partial line, lines that start with ``"data: "`` checked
for ``[DONE]`` and given to ``JSON.parse``, ``choices[0].delta.content``
appended, the last ``finish_reason`` and ``usage`` kept. It is reproduced as
described, blind spots included (no ``trim``, so a ``"\\r"`` stays on the line).

Over HTTP only (``run --http``): ``parse`` raises. The error translated is the
loop's own ``HttpError`` (the ``res.ok`` check), with its status and the body
text as the message; anything else thrown in the page is a crash.
"""

from __future__ import annotations

from typing import Any

from streamproof.adapter import load_sibling

_browser = load_sibling(__file__, "_browser.py")
_browser.require_chromium("browser-reader")

NAME = "browser-reader"
VERSION = _browser.chromium_version()
CAPABILITIES = {"content", "finish_reason", "usage", "http_error"}

# The application code: streamChat is the parser under test; the lines after it
# only translate its result (or its HttpError) into an outcome.
LOOP = r"""
class HttpError extends Error {
  constructor(status, body) {
    super(`HTTP ${status}: ${body}`);
    this.name = 'HttpError';
    this.status = status;
  }
}

async function streamChat(url, request) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer streamproof' },
    body: JSON.stringify(request),
  });
  if (!res.ok) throw new HttpError(res.status, await res.text());
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let text = '';
  let finishReason = null;
  let usage = null;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const line of lines) {
      if (!line.startsWith('data: ')) continue;
      const data = line.slice(6);
      if (data === '[DONE]') return { text, finishReason, usage };
      const chunk = JSON.parse(data);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (choice?.delta?.content) text += choice.delta.content;
      if (choice?.finish_reason) finishReason = choice.finish_reason;
    }
  }
  return { text, finishReason, usage };
}

try {
  const { text, finishReason, usage } = await streamChat(`${baseUrl}/chat/completions`, request);
  return {
    status: 'complete',
    choices: [{ index: 0, content: text, finish_reason: finishReason }],
    usage,
  };
} catch (error) {
  if (!(error instanceof HttpError)) throw error;
  const failure = { message: error.message, type: null, code: null, http_status: error.status };
  return { status: 'error', choices: [], error: failure };
}
"""


def parse(response: Any) -> dict[str, Any]:
    raise RuntimeError(_browser.HTTP_ONLY)


def call(base_url: str, request: dict[str, Any]) -> Any:
    return _browser.run_in_page(base_url, LOOP, request)
