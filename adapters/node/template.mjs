// A template for scoring your own JavaScript parser with streamproof.
//
// Copy this file and protocol.mjs (next to it) into your project, replace the
// stand-in parser below with yours, and run:
//
//   streamproof run --adapter "cmd:node my-adapter.mjs"
//
// protocol.mjs speaks the harness's JSON-lines protocol on stdin/stdout and
// hands parse() each case as a fetch-like response: status, headers,
// request, body (a ReadableStream of the transport's reads) and
// bytesDelivered. parse() feeds the body to your parser the way your
// application does and returns what the parser exposed as an outcome
// (schemas/outcome.schema.json in streamproof). Translate; never fix: do not
// compute anything your parser did not tell you, or the verdicts describe a
// parser that does not exist.

import { serve } from './protocol.mjs';

// Stand-in for the parser under test: replace it with an import of yours.
class StandInParser {
  text = '';
  #rest = '';
  #decoder = new TextDecoder();

  /** Take one read; return the content pieces it completed. */
  feed(bytes) {
    const lines = (this.#rest + this.#decoder.decode(bytes, { stream: true })).split('\n');
    this.#rest = lines.pop();
    const pieces = [];
    for (const line of lines) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const piece = JSON.parse(line.slice(6)).choices?.[0]?.delta?.content;
      if (piece) pieces.push(piece);
    }
    this.text += pieces.join('');
    return pieces;
  }
}

async function parse(response) {
  const parser = new StandInParser();
  const deltas = [];
  for await (const bytes of response.body) {
    for (const piece of parser.feed(bytes)) {
      // What surfaced, and how many body bytes had arrived when it did.
      deltas.push({ choice: 0, content: piece, at_byte: response.bytesDelivered });
    }
  }
  // Catch only the errors your parser documents, and report status "error":
  // anything else that escapes parse() is a crash verdict, as it should be.
  return { status: 'complete', choices: [{ index: 0, content: parser.text }], deltas };
}

serve({
  name: 'my-parser',
  version: '0.0.0',
  // Only what your parser really exposes; a case needing more is skipped.
  capabilities: ['content', 'incremental'],
  parse,
});
