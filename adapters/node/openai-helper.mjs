// Adapter "node-openai-helper": the OpenAI Node SDK's streaming helper,
// client.chat.completions.stream(), and its finalChatCompletion().
//
// Where the "node-openai" adapter iterates the raw chunks of
// create({stream: true}) and accumulates them itself, this one lets the SDK's
// ChatCompletionStream do it, as the SDK's helpers guide shows:
// stream(params).on(event, ...) and then `await stream.finalChatCompletion()`.
// The helper keeps its own snapshot, checks the finished turn (a choice
// without a finish reason or a role is rejected) and emits events; the
// completion it resolves with is translated field by field. Deltas come from
// its documented 'chunk' event (the raw chunk, with each choice's index),
// recorded with bytesDelivered.
//
// Errors translated: finalChatCompletion() "rejects if an error occurred or
// the stream ended prematurely" (AbstractChatCompletionRunner.d.ts); the
// SDK's errors are OpenAI.OpenAIError and its subclasses (APIError for an
// HTTP error status or an error event, LengthFinishReasonError, ...). Those
// become status "error" with the helper's last snapshot, when it still has
// one (currentChatCompletionSnapshot). The helper's event stream wraps any
// other exception in a plain OpenAIError whose `cause` is the original: that
// one is rethrown (a SyntaxError on a corrupt event is a crash, as with
// "node-openai"). Anything else escapes and is a crash.
// The helper reads streams only (no `non_streaming`), does not say whether a
// stream ended cleanly beyond rejecting (no `truncation`), and its types carry
// no reasoning field (no `reasoning`). call() (run --http): the same client on
// its default fetch against the replay server; no `deltas` (no byte counts).

import { parts, toolCalls } from './openai-parts.mjs';
import { replayFetch, serve } from './protocol.mjs';
import OpenAI from 'openai';
import { VERSION } from 'openai/version';

const BASE_URL = 'http://streamproof.invalid/v1';

/** A ChatCompletion (or the helper's in-progress snapshot of one), as the outcome. */
function fromCompletion(completion, status) {
  const choices = [];
  for (const choice of completion?.choices ?? []) {
    if (!choice) continue; // the snapshot keeps choices by index: it may have holes
    const { index, message, finish_reason } = choice;
    choices.push({
      index,
      role: message?.role ?? null,
      content: message?.content ?? null,
      refusal: message?.refusal ?? null,
      finish_reason: finish_reason ?? null,
      tool_calls: toolCalls(message),
      ...parts(choice),
    });
  }
  const { usage = null, id = null, model = null } = completion ?? {};
  return { status, choices, usage, id, model };
}

function failed(error, snapshot) {
  const code = error.code;
  const outcome = snapshot ? fromCompletion(snapshot, 'error') : { status: 'error', choices: [] };
  return {
    ...outcome,
    error: {
      message: error.message,
      type: typeof error.type === 'string' ? error.type : null,
      code: typeof code === 'string' || Number.isInteger(code) ? code : null,
      http_status: error.status ?? null,
    },
  };
}

async function drive(options, request, response) {
  const client = new OpenAI({ apiKey: 'streamproof', maxRetries: 0, ...options });
  const { stream: _stream, ...params } = { model: 'model', messages: [], ...request };
  const deltas = [];
  const stream = client.chat.completions.stream(params);
  stream.on('chunk', (chunk) => {
    for (const { index, delta } of chunk.choices ?? []) {
      if (!delta?.content) continue;
      deltas.push({ choice: index, content: delta.content, at_byte: response?.bytesDelivered });
    }
  });
  try {
    const completion = await stream.finalChatCompletion();
    return { ...fromCompletion(completion, 'complete'), deltas };
  } catch (error) {
    if (!(error instanceof OpenAI.OpenAIError)) throw error;
    const { cause } = error;
    if (error.constructor === OpenAI.OpenAIError && cause instanceof Error) {
      if (!(cause instanceof OpenAI.OpenAIError)) throw cause; // EventStream's wrapping
    }
    return { ...failed(error, stream.currentChatCompletionSnapshot), deltas };
  }
}

async function parse(response) {
  return drive({ baseURL: BASE_URL, fetch: replayFetch(response) }, response.request, response);
}

async function call(baseUrl, request) {
  const { deltas, ...outcome } = await drive({ baseURL: baseUrl }, request, null);
  return outcome;
}

serve({
  name: 'node-openai-helper',
  version: VERSION,
  capabilities: [
    'content', 'role', 'finish_reason', 'usage', 'tool_calls', 'refusal', 'multiple_choices',
    'stream_error', 'http_error', 'metadata', 'incremental',
    'function_call', 'custom_tool_calls', 'logprobs', 'audio', 'annotations',
  ],
  parse,
  call,
});
