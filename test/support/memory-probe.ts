import { createRequire, syncBuiltinESMExports } from 'node:module';
import { getHeapSpaceStatistics } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/**
 * Preloaded into a service started by a soak test (`node --expose-gc --import …/memory-probe.js`): on
 * SIGUSR2 it runs two full garbage collections and writes the memory left in use to stderr as one line
 * `memory-probe {json}`, so that what a request leaves behind is told from garbage not yet collected. The
 * JIT's compiled code (code space) is reported apart: it grows as the code warms up, not per request.
 *
 * The service's worker threads (a PGlite datasource's, the SQL door's catalog mirror) have heaps of their own
 * that a collection here does not reach: each is measured by a heap snapshot of it, which V8 takes after a
 * full collection of that thread, as the sum of its objects' sizes.
 */
const collect = (globalThis as { gc?: () => void }).gc;

// Every worker the service starts is tracked: the probe is loaded first, so the service's `Worker` is this one.
const threads = createRequire(import.meta.url)('node:worker_threads') as { Worker: typeof Worker };
const workers = new Set<Worker>();
threads.Worker = class TrackedWorker extends threads.Worker {
  constructor(...args: ConstructorParameters<typeof Worker>) {
    super(...args);
    workers.add(this);
    this.once('exit', () => workers.delete(this));
  }
};
syncBuiltinESMExports();

/** The bytes of the live objects of a worker's heap but compiled code, read from a snapshot (taken after a full collection). */
async function liveHeap(worker: Worker): Promise<number> {
  let text = '';
  for await (const chunk of await worker.getHeapSnapshot()) text += String(chunk);
  const snapshot = JSON.parse(text) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[] };
  const { node_fields: fields, node_types: [types] } = snapshot.snapshot.meta;
  const type = fields.indexOf('type');
  const size = fields.indexOf('self_size');
  const code = types.indexOf('code');
  let bytes = 0;
  for (let at = 0; at < snapshot.nodes.length; at += fields.length) {
    if (snapshot.nodes[at + type] !== code) bytes += snapshot.nodes[at + size] as number;
  }
  return bytes;
}

process.on('SIGUSR2', () => {
  void (async () => {
    const threadHeaps: number[] = [];
    for (const worker of workers) threadHeaps.push(await liveHeap(worker).catch(() => 0));
    collect?.();
    collect?.();
    const { rss, heapUsed, external } = process.memoryUsage();
    const code = getHeapSpaceStatistics().filter((space) => space.space_name.startsWith('code_')).reduce((sum, space) => sum + space.space_used_size, 0);
    process.stderr.write(`memory-probe ${JSON.stringify({ rss, heapUsed, external, code, threadHeaps })}\n`);
  })();
});
