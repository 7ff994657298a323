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
// while the case runs, is a crash reply; the process keeps serving. An error
// that a case's own timers or promises raise after its reply is printed on
// stderr with the case it came from, and charged to no case (docs/protocol.md).
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

const PROTOCOL = 1;
const writeProtocol = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);

let faults = null; // what went unhandled while the current case ran
let serving = false; // serve() has begun: before it, an uncaught error ends the process
// The case whose code (timers and promises included) raised: an error that a
// case's parser leaves behind after its reply is never charged to the next case.
const caseOf = new AsyncLocalStorage();
let current = null; // the seq of the case now running

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
    if (faults) faults.push(`${event}: ${oneLine(error)}`);
  });
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

/** One case: `produce()` gives the outcome (parse or call), or throws. */
async function answer(message, produce) {
  faults = [];
  current = message.seq;
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
    result = { seq: message.seq, crash: oneLine(error) };
  }
  const seen = faults;
  faults = null;
  current = null;
  if (seen.length && result.crash === undefined) result = { seq: message.seq, crash: seen[0] };
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
      reply(await answer(message, () => adapter.parse(replayResponse(message))));
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
