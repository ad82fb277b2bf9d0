// `vdb-service start` on the peers benchmark's PostgreSQL config (bench/peers/service-postgres.yaml), from a
// checkout's dist/, with the autocannon options of its one-row lookup, for the CPU benchmarks.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Starts the service of checkout `root` on `port`; stdout is drained, as a log reader would. */
export function startLookupService({ root, port, token, nodeArgs = [], connections = 20 }) {
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'core', 'cli.js'), 'start', '--config', join(here, 'bench', 'peers', 'service-postgres.yaml'), '--port', String(port)],
    { cwd: root, env: { ...process.env, NODE_ENV: 'production', BENCH_TOKEN: token }, stdio: ['ignore', 'pipe', 'ignore'] });
  child.stdout.resume();
  const url = `http://127.0.0.1:${port}/api/v1/query/perform/customer_by_email`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return { child, load: { url, method: 'POST', headers, body: JSON.stringify({ email: 'ada@example.com' }), connections } };
}

/** Waits until the server behind `load` answers its lookup with 200 (two minutes at most). */
export async function untilAnswering(child, load) {
  for (let tries = 0; ; tries++) {
    if (tries > 480 || child.exitCode !== null) throw new Error(`the server on ${load.url} did not answer 200`);
    const ok = await fetch(load.url, { method: load.method, headers: load.headers, body: load.body, signal: AbortSignal.timeout(5_000) }).then((response) => response.status === 200, () => false);
    if (ok) return;
    await sleep(250);
  }
}
