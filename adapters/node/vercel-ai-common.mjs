// What the two Vercel AI SDK adapters ("vercel-ai", "vercel-ai-result") share:
// the call to streamText as an application makes it, and the translation of
// the errors the SDK documents. Not an adapter itself (it serves nothing).

import { createOpenAICompatible, VERSION as PROVIDER_VERSION } from '@ai-sdk/openai-compatible';
import { APICallError, StreamProviderError, jsonSchema, streamText, tool } from 'ai';
import { replayFetch, versionOf } from './protocol.mjs';

globalThis.AI_SDK_LOG_WARNINGS = false;
const BASE_URL = 'http://streamproof.invalid/v1';

export const VERSION = `${versionOf('ai')} (@ai-sdk/openai-compatible ${PROVIDER_VERSION})`;

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

/**
 * The call as an application makes it: @ai-sdk/openai-compatible with the case
 * as its documented `fetch` option, the request's plain-text turns, its tools
 * declared without execute (so their calls come back as calls), no retries.
 */
export function callOptions(response) {
  const request = response.request;
  const provider = createOpenAICompatible({
    name: 'streamproof',
    baseURL: BASE_URL,
    apiKey: 'streamproof',
    fetch: replayFetch(response),
  });
  return {
    model: provider(request.model ?? 'model'),
    ...prompt(request),
    tools: declaredTools(request),
    maxRetries: 0,
  };
}

/** streamText with callOptions; `onError` gets each error its onError callback reports. */
export function startStream(response, onError = () => {}) {
  return streamText({ ...callOptions(response), onError: ({ error }) => onError(error) });
}

const text = (value) => (typeof value === 'string' ? value : null);
const code = (value) => (typeof value === 'string' || Number.isInteger(value) ? value : null);

/** An error the SDK reported, as the outcome's `error`. */
export function describe(error) {
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
