"""Adapter "browser-eventsource-parser": eventsource-parser's createParser, in Chromium.

The same application as the Node adapter ``eventsource-parser`` (see
``adapters/node/eventsource-parser.mjs``), run inside headless Chromium
against streamproof's replay server: the page's ``fetch`` POSTs the request,
each read of ``res.body`` is decoded with ``TextDecoder`` ``{stream: true}``
and fed to ``parser.feed()``; at the end the decoder is flushed and
``parser.reset({consume: true})`` ends the parse. Each event's data goes to
``JSON.parse`` except ``[DONE]``; chunks are accumulated in the common pattern
(content, role and the last finish reason per choice index, the last usage,
the first id and model). The library's ESM build comes from the Node adapters'
cache (``streamproof setup-node``) and is put into the page as one function:
its two files (``errors.js``, ``parse.js``) with their import and export
keywords removed; it has no dependencies. The library has no notion of HTTP
status or of errors in a stream, and the application does not check
``res.ok``, so neither is claimed; a ``JSON.parse`` failure is a crash.

Over HTTP only (``run --http``): ``parse`` raises.
"""

from __future__ import annotations

import json
import re
from typing import Any

from streamproof.adapter import AdapterError, load_sibling
from streamproof.nodejs import INSTALL_COMMAND, cache_dir

_browser = load_sibling(__file__, "_browser.py")
_browser.require_chromium("browser-eventsource-parser")

_PACKAGE = cache_dir() / "node_modules" / "eventsource-parser"
_MODULES = re.compile(r"^(import .*|export \{.*\} from .*|//# sourceMappingURL=.*)$", re.M)


def _library() -> tuple[str, str]:
    """eventsource-parser's version and its ESM build as plain script text."""
    try:
        version = json.loads((_PACKAGE / "package.json").read_text(encoding="utf-8"))["version"]
        parts = [(_PACKAGE / "dist" / name).read_text(encoding="utf-8") for name in _FILES]
    except (OSError, ValueError, KeyError):
        raise AdapterError(
            f"browser-eventsource-parser: eventsource-parser is not installed in "
            f"{cache_dir()}: run `{INSTALL_COMMAND}`"
        ) from None
    source = "\n".join(_MODULES.sub("", part) for part in parts)
    source = re.sub(r"^export (class|function|const) ", r"\1 ", source, flags=re.M)
    if re.search(r"^\s*(import|export)\b", source, re.M):
        raise AdapterError(
            f"browser-eventsource-parser: eventsource-parser {version} has a module "
            "layout this adapter does not know (imports beyond errors.js and parse.js)"
        )
    return str(version), source


_FILES = ("errors.js", "parse.js")
VERSION, _SOURCE = _library()
NAME = "browser-eventsource-parser"
CAPABILITIES = {"content", "role", "finish_reason", "usage", "multiple_choices", "metadata"}

APPLICATION = r"""
class ChunkReader {
  choices = new Map();
  usage = null;
  id = null;
  model = null;

  /** Take one event's data; false once [DONE] arrived. */
  data(data) {
    if (data === '[DONE]') return false;
    const chunk = JSON.parse(data);
    this.id ||= chunk.id || null;
    this.model ||= chunk.model || null;
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices || []) {
      const index = choice.index ?? 0;
      if (!this.choices.has(index)) {
        this.choices.set(index, { content: '', role: null, finish_reason: null });
      }
      const state = this.choices.get(index);
      const delta = choice.delta || {};
      if (delta.role) state.role = delta.role;
      if (delta.content) state.content += delta.content;
      if (choice.finish_reason) state.finish_reason = choice.finish_reason;
    }
    return true;
  }

  outcome() {
    const indexes = [...this.choices.keys()].sort((a, b) => a - b);
    const choices = indexes.map((index) => ({ index, ...this.choices.get(index) }));
    return { status: 'complete', choices, usage: this.usage, id: this.id, model: this.model };
  }
}

const res = await fetch(`${baseUrl}/chat/completions`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: 'Bearer streamproof' },
  body: JSON.stringify(request),
});
const reader = new ChunkReader();
let done = false;
const parser = createParser({
  onEvent(event) {
    if (!done) done = !reader.data(event.data);
  },
});
const decoder = new TextDecoder();
for await (const value of res.body) {
  parser.feed(decoder.decode(value, { stream: true }));
  if (done) break;
}
if (!done) {
  parser.feed(decoder.decode());
  parser.reset({ consume: true });
}
return reader.outcome();
"""

# The library in a block of its own, then the application.
_BODY = f"const createParser = (() => {{\n{_SOURCE}\nreturn createParser;\n}})();\n{APPLICATION}"


def parse(response: Any) -> dict[str, Any]:
    raise RuntimeError(_browser.HTTP_ONLY)


def call(base_url: str, request: dict[str, Any]) -> Any:
    return _browser.run_in_page(base_url, _BODY, request)
