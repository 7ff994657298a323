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
// Non-streamed bodies belong to generateText and are not driven here. The
// streamText call and the error translation live in vercel-ai-common.mjs,
// shared with "vercel-ai-result" (the result's promises).

import { describe, startStream, VERSION } from './vercel-ai-common.mjs';
import { serve } from './protocol.mjs';
import { AISDKError } from 'ai';

async function parse(response) {
  const result = startStream(response);
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
  version: VERSION,
  capabilities: [
    'content', 'finish_reason', 'usage', 'tool_calls', 'reasoning', 'stream_error', 'http_error',
    'metadata', 'incremental',
  ],
  parse,
});
