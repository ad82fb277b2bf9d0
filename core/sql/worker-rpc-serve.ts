/**
 * The worker side of a WorkerRpc (worker-rpc.ts): loads the module named in `workerData` and answers each
 * request with its `perform`. It imports nothing else, so a worker pays only for what its module needs.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { WorkerReply, WorkerRequest, WireError } from './worker-rpc-messages.js';

if (parentPort === null) throw new Error('worker-rpc-serve.js runs as a worker thread');
const port: MessagePort = parentPort;
const { perform } = (await import((workerData as { module: string }).module)) as { perform: (command: unknown) => Promise<unknown> };

/**
 * Requests run one after the other, in the order sent: the main thread may send the next before this one is
 * answered, and none may start while another awaits PGlite (a caller's scope and the login's reset must not
 * interleave).
 */
let turn: Promise<void> = Promise.resolve();
port.on('message', (request: WorkerRequest<unknown>) => {
  // a reply that could not be sent at all leaves its request to its time limit on the main thread
  turn = turn.then(() => answer(request)).catch(() => undefined);
});

async function answer(request: WorkerRequest<unknown>): Promise<void> {
  let reply: WorkerReply;
  let trapped = false;
  try {
    if (Date.now() >= request.deadline) throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    reply = { id: request.id, value: await perform(request.command) };
  } catch (error) {
    reply = { id: request.id, error: wireError(error) };
    // a WASM trap (WebAssembly.RuntimeError, the only error of that name) leaves PGlite's memory in no known state
    trapped = error instanceof Error && error.name === 'RuntimeError';
  }
  if (trapped) reply.ending = true;
  try {
    // a snapshot moves rather than being copied
    const moved = 'value' in reply && reply.value instanceof Uint8Array ? [reply.value.buffer as ArrayBuffer] : [];
    port.postMessage(reply, moved);
  } catch (error) {
    // a value structured clone cannot carry
    port.postMessage({ id: request.id, error: wireError(error), ...(trapped ? { ending: true as const } : {}) } satisfies WorkerReply);
  }
  // the owner opens another worker
  if (trapped) process.exit(1);
}

function wireError(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') fields[key] = value;
  }
  return { name: error.name, message: error.message, fields };
}
