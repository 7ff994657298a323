// Adapter "vercel-ai-result": the Vercel AI SDK's streamText result promises.
//
// Where "vercel-ai" reads the parts stream, this adapter reads what most
// applications read, as the SDK's README shows: the text as it streams
// (`for await (const text of result.textStream)`), then the result's
// promises `text`, `toolCalls`, `rawFinishReason`, `usage` and `finalStep`.
// The call itself (@ai-sdk/openai-compatible with the case as its `fetch`,
// the request's tools declared without execute) is vercel-ai-common.mjs's.
//
// What the SDK exposes, translated: `text` (content), `finalStep.reasoningText`
// (reasoning), each of `toolCalls` (its toolCallId and toolName; its `input`
// is typed as the parsed arguments, so the arguments are JSON.stringify of
// it, a string input left as the SDK gives it), `rawFinishReason` (the
// provider's value; `finishReason` is the SDK's unified name for it),
// `usage.raw` (the provider's usage object) and `finalStep.response`'s id and
// modelId. Deltas: each piece of textStream with bytesDelivered.
//
// Errors, as the SDK documents them: the `onError` callback of streamText
// (textStream surfaces no error parts), and an AISDKError a promise rejects
// with (APICallError for an HTTP error status). With an error, content is the
// text textStream handed out before it. The SDK shows only choices[0], no
// role, merges a refusal into the text and reports a stream that ends without
// a finish reason as an error: role, refusal, multiple_choices and truncation
// are not claimed. A request that does not ask for a stream goes through
// generateText with the same options; its result has the same fields, read
// the same way, and it throws what it fails with (no deltas).

import { callOptions, describe, startStream, VERSION } from './vercel-ai-common.mjs';
import { serve } from './protocol.mjs';
import { AISDKError, generateText } from 'ai';

function toolCall(call, index) {
  const { toolCallId: id, toolName: name, input } = call;
  const args = typeof input === 'string' ? input : JSON.stringify(input ?? null);
  return { index, id, type: 'function', function: { name, arguments: args } };
}

/** The result's fields (settled promises, or generateText's values) as the outcome. */
function fromResult(outcome, [text, toolCalls, finish, usage, step]) {
  const choice = {
    index: 0,
    content: text,
    reasoning: step?.reasoningText ?? null,
    finish_reason: finish ?? null,
    tool_calls: toolCalls.map(toolCall),
  };
  const id = step?.response?.id ?? null;
  const model = step?.response?.modelId ?? null;
  return { ...outcome, choices: [choice], usage: usage?.raw ?? null, id, model };
}

async function generate(response) {
  try {
    const result = await generateText(callOptions(response));
    const { text, toolCalls, rawFinishReason, usage, finalStep } = result;
    return fromResult({ status: 'complete' }, [text, toolCalls, rawFinishReason, usage, finalStep]);
  } catch (thrown) {
    if (!AISDKError.isInstance(thrown)) throw thrown;
    return { status: 'error', error: describe(thrown), choices: [], usage: null };
  }
}

async function parse(response) {
  if (response.request.stream !== true) return generate(response);
  let error = null;
  const result = startStream(response, (reported) => {
    error ??= reported;
  });
  const deltas = [];
  let streamed = '';
  let settled = null;
  try {
    for await (const text of result.textStream) {
      streamed += text;
      deltas.push({ choice: 0, content: text, at_byte: response.bytesDelivered });
    }
    settled = await Promise.all([
      result.text,
      result.toolCalls,
      result.rawFinishReason,
      result.usage,
      result.finalStep,
    ]);
  } catch (thrown) {
    if (!AISDKError.isInstance(thrown)) throw thrown;
    error ??= thrown;
  }
  const outcome = { status: error === null ? 'complete' : 'error', deltas };
  if (error !== null) outcome.error = describe(error);
  if (settled === null) {
    const choices = streamed ? [{ index: 0, content: streamed }] : [];
    return { ...outcome, choices, usage: null, id: null, model: null };
  }
  return fromResult(outcome, settled);
}

serve({
  name: 'vercel-ai-result',
  version: VERSION,
  capabilities: [
    'content', 'finish_reason', 'usage', 'tool_calls', 'reasoning', 'stream_error', 'http_error',
    'non_streaming', 'metadata', 'incremental',
  ],
  parse,
});
