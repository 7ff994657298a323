// Adapter "eventsource-parser": createParser() fed the decoded reads, JSON.parse per event.
//
// eventsource-parser turns text into events and nothing more. The code around
// it is what an application writes, as the package's README shows: a
// TextDecoder decodes each read with {stream: true} and parser.feed() takes
// the text; onEvent gets each event; at the end of the body the decoder is
// flushed and parser.reset({consume: true}) ends the parse, as its README's
// note says. Each event's data goes to JSON.parse except [DONE], and the
// chunks are accumulated in the common pattern (like adapters/_chunk_reader.py:
// content, role and the last finish reason per choice index, the last usage,
// the first id and model); event types are not looked at. The library has no
// notion of HTTP status or of errors in a stream, so neither is claimed; a
// JSON.parse failure escapes, as it would in the application, and is a crash.

import { serve, versionOf } from './protocol.mjs';
import { createParser } from 'eventsource-parser';

class ChunkReader {
  choices = new Map();
  usage = null;
  id = null;
  model = null;
  deltas = [];

  constructor(response) {
    this.response = response;
  }

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
      if (delta.content) {
        state.content += delta.content;
        const at_byte = this.response.bytesDelivered;
        this.deltas.push({ choice: index, content: delta.content, at_byte });
      }
      if (choice.finish_reason) state.finish_reason = choice.finish_reason;
    }
    return true;
  }

  outcome(status = 'complete') {
    const indexes = [...this.choices.keys()].sort((a, b) => a - b);
    return {
      status,
      choices: indexes.map((index) => ({ index, ...this.choices.get(index) })),
      usage: this.usage,
      id: this.id,
      model: this.model,
      deltas: this.deltas,
    };
  }
}

async function parse(response) {
  const reader = new ChunkReader(response);
  let done = false;
  const parser = createParser({
    onEvent(event) {
      if (!done) done = !reader.data(event.data);
    },
  });
  const decoder = new TextDecoder();
  for await (const value of response.body) {
    parser.feed(decoder.decode(value, { stream: true }));
    if (done) break;
  }
  if (!done) {
    parser.feed(decoder.decode());
    parser.reset({ consume: true });
  }
  return reader.outcome();
}

serve({
  name: 'eventsource-parser',
  version: versionOf('eventsource-parser'),
  capabilities: [
    'content', 'role', 'finish_reason', 'usage', 'multiple_choices', 'metadata', 'incremental',
  ],
  parse,
});
