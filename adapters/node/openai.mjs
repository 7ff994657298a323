// Adapter "node-openai": the official OpenAI Node SDK (the `openai` package).
//
// The case reaches the SDK through its documented `fetch` option, so its own
// SSE decoder, stream class and error mapping read the case's bytes read by
// read. Streams go through chat.completions.create({...request, stream: true})
// iterated with for await, as the SDK's README shows; bodies through
// chat.completions.create(request). The SDK hands out chunks and leaves
// accumulating them to the application: `Answer` below is that application
// code, kept to the fields the SDK's ChatCompletionChunk type declares.
//
// Errors translated, as the README documents them: OpenAI.APIError and its
// subclasses (an HTTP error status, or an error event or error object inside
// a stream), with what arrived before. Anything else escapes and is a crash.
// The SDK does not say whether a stream ended cleanly (no `truncation`), and
// its types carry no reasoning field (no `reasoning`). call() (run --http): the same
// client on its default fetch against the replay server; no `deltas` (no byte counts).

import { addCall, addParts, parts, present, toolCalls } from './openai-parts.mjs';
import { replayFetch, serve } from './protocol.mjs';
import OpenAI from 'openai';
import { VERSION } from 'openai/version';

const BASE_URL = 'http://streamproof.invalid/v1';

class Answer {
  choices = new Map();
  usage = null;
  id = null;
  model = null;
  deltas = [];

  choice(index) {
    if (!this.choices.has(index)) {
      const calls = new Map();
      const state = { role: null, content: '', refusal: '', finish_reason: null, calls };
      this.choices.set(index, { ...state, function_call: null, logprobs: null, audio: null });
    }
    return this.choices.get(index);
  }

  add(chunk, bytesDelivered) {
    this.id ||= chunk.id || null;
    this.model ||= chunk.model || null;
    if (chunk.usage) this.usage = chunk.usage;
    for (const { index, delta, finish_reason, logprobs } of chunk.choices ?? []) {
      const state = this.choice(index);
      addParts(state, delta, logprobs);
      if (delta?.role) state.role = delta.role;
      if (delta?.content) {
        state.content += delta.content;
        this.deltas.push({ choice: index, content: delta.content, at_byte: bytesDelivered });
      }
      if (delta?.refusal) state.refusal += delta.refusal;
      for (const call of delta?.tool_calls ?? []) {
        if (!state.calls.has(call.index)) state.calls.set(call.index, { id: null, type: null });
        addCall(state.calls.get(call.index), call);
      }
      if (finish_reason) state.finish_reason = finish_reason;
    }
  }

  outcome(status) {
    const choices = [...this.choices.keys()].sort((a, b) => a - b).map((index) => {
      const { calls, ...choice } = this.choices.get(index);
      const keys = [...calls.keys()].sort((a, b) => a - b);
      // The index each call was keyed by; one the provider left out keys them all as one.
      const toolCalls = keys.map((key, i) => ({
        index: Number.isInteger(key) ? key : i,
        ...calls.get(key),
      }));
      return { index, ...present(choice), tool_calls: toolCalls };
    });
    const { usage, id, model, deltas } = this;
    return { status, choices, usage, id, model, deltas };
  }
}

function fromCompletion(completion) {
  const choices = (completion.choices ?? []).map((choice) => ({
    index: choice.index,
    role: choice.message?.role ?? null,
    content: choice.message?.content ?? null,
    refusal: choice.message?.refusal ?? null,
    finish_reason: choice.finish_reason ?? null,
    tool_calls: toolCalls(choice.message, { byPosition: true }),
    ...parts(choice),
  }));
  const { usage = null, id = null, model = null } = completion;
  return { status: 'complete', choices, usage, id, model };
}

function failed(error, answer) {
  const code = error.code;
  return {
    ...(answer ? answer.outcome('error') : { status: 'error', choices: [] }),
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
  request = { model: 'model', messages: [], ...request };
  let answer = null;
  try {
    if (request.stream !== true) {
      return fromCompletion(await client.chat.completions.create(request));
    }
    answer = new Answer();
    const stream = await client.chat.completions.create({ ...request, stream: true });
    for await (const chunk of stream) answer.add(chunk, response?.bytesDelivered ?? null);
    return answer.outcome('complete');
  } catch (error) {
    if (error instanceof OpenAI.APIError) return failed(error, answer);
    throw error;
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
  name: 'node-openai',
  version: VERSION,
  capabilities: [
    'content', 'role', 'finish_reason', 'usage', 'tool_calls', 'refusal', 'multiple_choices',
    'stream_error', 'http_error', 'non_streaming', 'metadata', 'incremental',
    'function_call', 'custom_tool_calls', 'logprobs', 'audio', 'annotations',
  ],
  parse,
  call,
});
