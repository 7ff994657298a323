// The adapter side of streamproof's subprocess protocol (protocol 1), for Node.
//
// An adapter module calls serve({name, version, capabilities, parse[, call]}).
// The harness writes one JSON object per line on stdin: {"cmd": "start"}, then
// a {"cmd": "run", ...} per case, then {"cmd": "stop"}; every reply is one JSON
// line on stdout. parse(response) gets the case as a fetch-like response:
//
//   status, headers (lower-case names), request, caseId, transport,
//   body            a ReadableStream that yields one Uint8Array per read of the
//                   transport, each handed out when the parser asks for it,
//   bytesDelivered  the number of body bytes handed out so far,
//
// and returns an outcome object (schemas/outcome.schema.json). An exception
// escaping parse, or a promise the library leaves rejected and unhandled
// while the case runs, is a crash reply, with the error's stack as `frames`
// (outermost first) and `at_byte` (the body bytes handed out by then); the
// process keeps serving. An error that a case's own timers or promises raise
// after its reply is printed on stderr with the case it came from, and
// charged to no case (docs/protocol.md).
//
// An adapter may also export call(baseUrl, request): a real client run
// against streamproof's replay server (`run --http`). serve() then announces
// "call": true in the handshake and answers {"cmd": "call", "seq", "base_url",
// "request"} by calling it, with the same reply shape (an exception is a crash).
//
// stdout carries the protocol only: whatever the adapter or a library prints
// (console.log included) goes to stderr.

import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const PROTOCOL = 1;
const writeProtocol = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);

let faults = null; // what went unhandled while the current case ran
let serving = false; // serve() has begun: before it, an uncaught error ends the process
// The case whose code (timers and promises included) raised: an error that a
// case's parser leaves behind after its reply is never charged to the next case.
const caseOf = new AsyncLocalStorage();
let current = null; // the seq of the case now running
let delivered = () => undefined; // the body bytes the running case has been handed
const SELF = fileURLToPath(import.meta.url); // the harness's frames, not the adapter's

function oneLine(error) {
  const text = String(error?.message ?? error).split(/\s+/).filter(Boolean).join(' ');
  const name = error instanceof Error ? error.constructor?.name || error.name : typeof error;
  return text ? `${name}: ${text}` : name;
}

for (const event of ['unhandledRejection', 'uncaughtException']) {
  process.on(event, (error) => {
    console.error(`streamproof adapter: ${event}:`, error);
    // While the adapter module loads (before serve()), nothing can be served:
    // exit non-zero, so that the harness reports this error, not a silent end.
    if (!serving) process.exit(1);
    // Between cases, no case is charged: the error stays on stderr.
    const owner = caseOf.getStore();
    if (owner !== undefined && owner.seq !== current) {
      console.error(
        `streamproof adapter: the ${event} above comes from case ${owner.case} ` +
          `(seq ${owner.seq}), after its reply: it is not charged to another case`,
      );
      return;
    }
    if (faults) faults.push({ said: `${event}: ${oneLine(error)}`, error, at: delivered() });
  });
}

// A V8 stack line: "    at fn (file:line:col)", "    at file:line:col", either
// after "async " for a frame an await resumed, or a built-in with no position
// ("at JSON.parse (<anonymous>)").
const FRAME = /^\s+at (?:async )?(?:(.*?) \((.*)\)|(.*))$/;
const POSITION = /^(.*?):(\d+)(?::\d+)?$/;

function frameOf(text) {
  const match = FRAME.exec(text);
  if (!match) return null;
  const location = match[2] ?? match[3];
  const position = POSITION.exec(location);
  let file = position ? position[1] : location === 'native' ? 'native' : '<anonymous>';
  if (file.startsWith('file://')) {
    try {
      file = fileURLToPath(file);
    } catch {
      // not a file URL Node can map: keep it as written
    }
  }
  if (!file) return null;
  return { file, line: position ? Number(position[2]) : 0, function: match[1] ?? '' };
}

/**
 * Where `error` was raised: {frames, traceback} from its V8 stack, which lists
 * the innermost frame first. The protocol wants the outermost first
 * (docs/protocol.md), so both are reversed; this file's own frames are left out.
 */
function crashDetails(error) {
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : '';
  const lines = stack.split('\n');
  const first = lines.findIndex((line) => FRAME.test(line));
  if (first < 0) return {};
  const kept = [];
  for (const line of lines.slice(first)) {
    const frame = frameOf(line);
    if (frame && frame.file !== SELF) kept.push([line.trim(), frame]);
  }
  if (!kept.length) return {};
  kept.reverse();
  const header = lines.slice(0, first).join('\n');
  return {
    traceback: [...kept.map(([line]) => `  ${line}`), header].join('\n'),
    frames: kept.map(([, frame]) => frame),
  };
}

function crashReply(seq, said, error, at) {
  const result = { seq, crash: said, ...crashDetails(error) };
  if (Number.isInteger(at) && at >= 0) result.at_byte = at;
  return result;
}

function reply(message) {
  writeProtocol(JSON.stringify(message) + '\n');
}

// A socket's next read completes in a later turn of the event loop; so does
// every read here, so that a library's promise chains settle in between (and
// bytesDelivered never runs ahead of what the parser has had time to use).
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The response parse() receives for one run message. */
export function replayResponse(message) {
  const body = Buffer.from(message.body, 'base64');
  const ends = message.boundaries;
  let next = 0;
  let delivered = 0;
  const stream = new ReadableStream(
    {
      async pull(controller) {
        await nextTurn();
        if (next >= ends.length) {
          controller.close();
          return;
        }
        const start = next ? ends[next - 1] : 0;
        const end = ends[next++];
        delivered = end;
        controller.enqueue(new Uint8Array(body.subarray(start, end))); // a copy
      },
    },
    { highWaterMark: 0 }, // read only when the parser asks
  );
  const headers = {};
  for (const [key, value] of Object.entries(message.headers)) headers[key.toLowerCase()] = value;
  return {
    status: message.status,
    headers,
    request: message.request,
    caseId: message.case,
    transport: message.transport,
    body: stream,
    get bytesDelivered() {
      return delivered;
    },
  };
}

/**
 * A fetch that answers its one request with the case: the status (with the
 * reason phrase an HTTP/1.1 server sends, as Node's fetch would report it),
 * the headers and the body read by read. For libraries with a `fetch` option.
 */
export function replayFetch(response) {
  const { status, headers } = response;
  const statusText = STATUS_CODES[status] ?? '';
  return async (_url, _init) => new Response(response.body, { status, statusText, headers });
}

/** The version of a package installed in the node_modules next to this file. */
export function versionOf(name) {
  const path = new URL(`./node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(path, 'utf8')).version;
}

/**
 * One case: `produce()` gives the outcome (parse or call), or throws.
 * `bytesDelivered()` counts the body bytes handed out (undefined for a call).
 */
async function answer(message, produce, bytesDelivered = () => undefined) {
  faults = [];
  current = message.seq;
  delivered = bytesDelivered;
  let result;
  try {
    const owner = { seq: message.seq, case: message.case ?? message.request?.model };
    const outcome = await caseOf.run(owner, async () => {
      const value = await produce();
      await nextTurn(); // let what this case left unhandled surface now
      return value;
    });
    result = { seq: message.seq, outcome: outcome ?? null };
  } catch (error) {
    result = crashReply(message.seq, oneLine(error), error, delivered());
  }
  const seen = faults;
  faults = null;
  current = null;
  delivered = () => undefined;
  if (seen.length && result.crash === undefined) {
    const [fault] = seen;
    result = crashReply(message.seq, fault.said, fault.error, fault.at);
  }
  try {
    JSON.stringify(result);
  } catch (error) {
    return { seq: message.seq, invalid: `outcome is not JSON: ${oneLine(error)}` };
  }
  return result;
}

/** Serve the protocol on stdin/stdout until "stop" or the end of stdin. */
export async function serve(adapter) {
  serving = true;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const message = JSON.parse(line);
    if (message.cmd === 'start') {
      reply({
        name: adapter.name,
        version: adapter.version,
        capabilities: [...adapter.capabilities].sort(),
        protocol: PROTOCOL,
        call: typeof adapter.call === 'function',
      });
    } else if (message.cmd === 'run') {
      let response = null; // built inside produce: a malformed message is a crash reply
      const produce = () => adapter.parse((response = replayResponse(message)));
      reply(await answer(message, produce, () => response?.bytesDelivered));
    } else if (message.cmd === 'call' && typeof adapter.call === 'function') {
      reply(await answer(message, () => adapter.call(message.base_url, message.request)));
    } else if (message.cmd === 'stop') {
      process.exit(0);
    } else {
      reply({ seq: message.seq, crash: `unexpected command ${JSON.stringify(message.cmd)}` });
    }
  }
  process.exit(0);
}
