// Adapter "recipe-fetch": the fetch + getReader() loop that provider docs hand out for Node.
//
// The parser under test is streamChat() below, written fresh after the loop
// that provider guides give for reading a chat stream without an SDK: POST
// with fetch, read res.body with getReader(), decode each read with
// TextDecoder's decode(value, {stream: true}), split the buffer on "\n" and
// keep the last partial line, skip lines that do not start with "data: ",
// slice(6).trim(), return at [DONE], JSON.parse the rest, keep `usage` when
// present, skip chunks with empty `choices`, append choices[0].delta?.content.
// It is reproduced faithfully, blind spots included: it reports the text and
// the usage and nothing else, and throws whatever fetch or JSON.parse throw.
// The adapter hands it a fetch that answers with the case and only
// translates its result.

import { replayFetch, serve } from './protocol.mjs';

const URL = 'http://streamproof.invalid/v1/chat/completions';

/** The recipe: the parser under test. */
export async function streamChat(fetchImpl, model, messages) {
  const res = await fetchImpl(URL, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer streamproof' },
    body: JSON.stringify({ model, messages, stream: true }),
  });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let text = '';
  let usage = null;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const line of lines) {
      if (!line.startsWith('data: ')) continue;
      const data = line.slice(6).trim();
      if (data === '[DONE]') return { text, usage };
      const chunk = JSON.parse(data);
      if (chunk.usage) usage = chunk.usage;
      if (!chunk.choices?.length) continue;
      const content = chunk.choices[0].delta?.content;
      if (content) text += content;
    }
  }
  return { text, usage };
}

async function parse(response) {
  const { model = '', messages = [] } = response.request;
  const { text, usage } = await streamChat(replayFetch(response), model, messages);
  return { status: 'complete', choices: [{ index: 0, content: text }], usage };
}

serve({
  name: 'recipe-fetch',
  version: `node ${process.versions.node}`,
  capabilities: ['content', 'usage'],
  parse,
});
