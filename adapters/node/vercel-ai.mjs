// Adapter "vercel-ai": the Vercel AI SDK (`ai`) over @ai-sdk/openai-compatible.
//
// The case reaches the provider through its documented `fetch` option:
// createOpenAICompatible({name, baseURL, apiKey, fetch}), then
// streamText({model, messages, tools, maxRetries: 0}) and its full stream of
// parts read with for await (`stream`, the AI SDK 7 name of `fullStream`).
// The request's tools are declared to streamText as an application would
// (without execute), so their calls come back as tool-call parts.
//
// What the SDK exposes, translated: text-delta parts (content; each recorded
// with bytesDelivered), reasoning-delta parts, tool calls (tool-call parts in
// the order the SDK emits them, their arguments the tool-input-delta texts;
// every tool call of this provider is a function call), the finish-step's
// rawFinishReason (the provider's value as the SDK reports it, not its
// unified name), its usage.raw (the provider's usage object), and its
// response id and modelId. Errors, as the SDK documents them: error parts in
// the stream, and AISDKError (APICallError for an HTTP error status) if one
// is thrown. The SDK shows only choices[0], no role, merges a refusal into
// the text and reports a stream that ends without a finish reason as an
// error: role, refusal, multiple_choices and truncation are not claimed.
// Non-streamed bodies belong to generateText and are not driven here.

import { replayFetch, serve, versionOf } from './protocol.mjs';
import { createOpenAICompatible, VERSION as PROVIDER_VERSION } from '@ai-sdk/openai-compatible';
import { AISDKError, APICallError, StreamProviderError, jsonSchema, streamText, tool } from 'ai';

globalThis.AI_SDK_LOG_WARNINGS = false;
const BASE_URL = 'http://streamproof.invalid/v1';

function declaredTools(request) {
  const tools = {};
  for (const { type, function: fn } of request.tools ?? []) {
    if (type !== 'function' || !fn?.name) continue;
    const inputSchema = jsonSchema(fn.parameters ?? { type: 'object', properties: {} });
    tools[fn.name] = tool({ description: fn.description, inputSchema });
  }
  return Object.keys(tools).length ? tools : undefined;
}

function prompt(request) {
  // The prompt does not shape the replayed answer: its plain-text turns are enough.
  const turns = (request.messages ?? []).filter((m) => typeof m.content === 'string');
  const system = turns.filter((m) => m.role === 'system' || m.role === 'developer');
  const messages = turns
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map(({ role, content }) => ({ role, content }));
  return {
    instructions: system.length ? system.map((m) => m.content).join('\n') : undefined,
    messages: messages.length ? messages : [{ role: 'user', content: 'Hello' }],
  };
}

const text = (value) => (typeof value === 'string' ? value : null);
const code = (value) => (typeof value === 'string' || Number.isInteger(value) ? value : null);

function describe(error) {
  if (APICallError.isInstance(error)) {
    const detail = error.data?.error ?? {};
    const { message, statusCode } = error;
    const http_status = statusCode ?? null;
    return { message, type: text(detail.type), code: code(detail.code), http_status };
  }
  if (StreamProviderError.isInstance(error)) {
    return { message: error.message, type: text(error.type), code: code(error.code) };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

async function parse(response) {
  const request = response.request;
  const provider = createOpenAICompatible({
    name: 'streamproof',
    baseURL: BASE_URL,
    apiKey: 'streamproof',
    fetch: replayFetch(response),
  });
  const result = streamText({
    model: provider(request.model ?? 'model'),
    ...prompt(request),
    tools: declaredTools(request),
    maxRetries: 0,
    onError() {}, // the parts below carry the errors
  });
  const seen = { content: '', reasoning: '', finish: null, usage: null, id: null, model: null };
  const inputs = new Map();
  const calls = [];
  const deltas = [];
  let error = null;
  let stepped = false; // a step starts once the response stream does
  try {
    for await (const part of result.stream) {
      if (part.type === 'start-step') {
        stepped = true;
      } else if (part.type === 'text-delta') {
        seen.content += part.text;
        deltas.push({ choice: 0, content: part.text, at_byte: response.bytesDelivered });
      } else if (part.type === 'reasoning-delta') {
        seen.reasoning += part.text;
      } else if (part.type === 'tool-input-delta') {
        inputs.set(part.id, (inputs.get(part.id) ?? '') + part.delta);
      } else if (part.type === 'tool-call') {
        const { toolCallId: id, toolName: name } = part;
        const function_ = { name, arguments: inputs.get(id) ?? '' };
        calls.push({ index: calls.length, id, type: 'function', function: function_ });
      } else if (part.type === 'finish-step') {
        seen.finish = part.rawFinishReason ?? null;
        seen.usage = part.usage?.raw ?? null;
        seen.id = part.response?.id ?? null;
        seen.model = part.response?.modelId ?? null;
      } else if (part.type === 'error') {
        error ??= part.error;
      }
    }
  } catch (thrown) {
    if (!AISDKError.isInstance(thrown)) throw thrown;
    error ??= thrown;
  }
  const { content, reasoning, finish, usage, id, model } = seen;
  return {
    status: error === null ? 'complete' : 'error',
    choices: stepped
      ? [{ index: 0, content, reasoning, finish_reason: finish, tool_calls: calls }]
      : [],
    usage,
    error: error === null ? null : describe(error),
    id,
    model,
    deltas,
  };
}

serve({
  name: 'vercel-ai',
  version: `${versionOf('ai')} (@ai-sdk/openai-compatible ${PROVIDER_VERSION})`,
  capabilities: [
    'content', 'finish_reason', 'usage', 'tool_calls', 'reasoning', 'stream_error', 'http_error',
    'metadata', 'incremental',
  ],
  parse,
});
