import { getHeapSpaceStatistics } from 'node:v8';

/**
 * Preloaded into a service started by a soak test (`node --expose-gc --import …/memory-probe.js`): on
 * SIGUSR2 it runs two full garbage collections and writes the memory left in use to stderr as one line
 * `memory-probe {json}`, so that what a request leaves behind is told from garbage not yet collected. The
 * JIT's compiled code (code space) is reported apart: it grows as the code warms up, not per request.
 */
const collect = (globalThis as { gc?: () => void }).gc;

process.on('SIGUSR2', () => {
  collect?.();
  collect?.();
  const { rss, heapUsed, external } = process.memoryUsage();
  const code = getHeapSpaceStatistics().filter((space) => space.space_name.startsWith('code_')).reduce((sum, space) => sum + space.space_used_size, 0);
  process.stderr.write(`memory-probe ${JSON.stringify({ rss, heapUsed, external, code })}\n`);
});
