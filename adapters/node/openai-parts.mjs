// The parts of a ChatCompletion choice beyond text that the OpenAI Node SDK
// types (docs/semantics.md §6.8 to §6.12), translated for "node-openai" and
// "node-openai-helper": ChatCompletionMessage.function_call, .tool_calls
// (function or custom), .audio, .annotations and ChatCompletion.Choice.logprobs,
// each as the SDK hands it over; and, for "node-openai"'s application code,
// the same parts accumulated from typed chunks.

/** A message's tool calls, function or custom (`type: "custom"`, `custom: {name, input}`),
 * indexed by their `index` (the helper's snapshot keeps it) or, `byPosition`, by position. */
export function toolCalls(message, { byPosition = false } = {}) {
  return (message?.tool_calls ?? []).map((call, i) => {
    const found = {
      index: !byPosition && Number.isInteger(call?.index) ? call.index : i,
      id: call?.id ?? null,
      type: call?.type ?? null,
    };
    if (call?.function || !call?.custom) {
      found.function = {
        name: call?.function?.name ?? null,
        arguments: call?.function?.arguments ?? null,
      };
    }
    if (call?.custom) found.custom = { name: call.custom.name ?? null, input: call.custom.input ?? null };
    return found;
  });
}

/** The legacy function call, logprobs, audio and annotations of one choice; a part the
 * SDK holds none of is left out (docs/semantics.md §12.3). */
export function parts(choice) {
  const message = choice?.message;
  const call = message?.function_call;
  const audio = message?.audio;
  const logprobs = choice?.logprobs;
  const found = {
    function_call: call ? { name: call.name ?? null, arguments: call.arguments ?? null } : null,
    logprobs: logprobs ? { content: logprobs.content ?? null, refusal: logprobs.refusal ?? null } : null,
    audio: audio
      ? {
          id: audio.id ?? null,
          data: audio.data ?? null,
          transcript: audio.transcript ?? null,
          expires_at: audio.expires_at ?? null,
        }
      : null,
    annotations: message?.annotations ?? null,
  };
  return Object.fromEntries(Object.entries(found).filter(([, value]) => value !== null));
}

// The typed parts of a delta and its choice (ChatCompletionChunk.Choice.Delta.function_call,
// .audio; Choice.logprobs), accumulated as the SDK's own ChatCompletionStream does: strings
// appended, token lists concatenated, id and expires_at as sent. The chunk type declares
// no annotations, so a typed application reads none from a stream.
export function addParts(state, delta, logprobs) {
  if (delta?.function_call) {
    state.function_call ??= { name: null, arguments: '' };
    state.function_call.name ||= delta.function_call.name || null;
    state.function_call.arguments += delta.function_call.arguments ?? '';
  }
  if (delta?.audio) {
    const audio = (state.audio ??= { id: null, data: '', transcript: '', expires_at: null });
    audio.id ||= delta.audio.id || null;
    audio.data += delta.audio.data ?? '';
    audio.transcript += delta.audio.transcript ?? '';
    if (delta.audio.expires_at != null) audio.expires_at = delta.audio.expires_at;
  }
  if (logprobs) {
    state.logprobs ??= { content: null, refusal: null };
    for (const key of ['content', 'refusal']) {
      if (Array.isArray(logprobs[key])) (state.logprobs[key] ??= []).push(...logprobs[key]);
    }
  }
}

/** One tool-call delta into the call it continues: a function's name and arguments,
 * or a custom tool's name and input (ChatCompletionChunk.Choice.Delta.ToolCall). */
export function addCall(known, call) {
  known.id ||= call.id || null;
  known.type ||= call.type || null;
  if (call.function || !call.custom) {
    known.function ??= { name: null, arguments: '' };
    known.function.name ||= call.function?.name || null;
    known.function.arguments += call.function?.arguments ?? '';
  }
  if (call.custom) {
    known.custom ??= { name: null, input: '' };
    known.custom.name ||= call.custom.name || null;
    known.custom.input += call.custom.input ?? '';
  }
}

const PARTS = new Set(['function_call', 'logprobs', 'audio', 'annotations']);

/** A choice without the parts of §6.8 to §6.12 that never arrived (§12.3). */
export function present(choice) {
  return Object.fromEntries(
    Object.entries(choice).filter(([key, value]) => value !== null || !PARTS.has(key)),
  );
}
