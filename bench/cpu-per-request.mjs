// The CPU time `vdb-service start` spends per request of the peers benchmark's lookup, as a user runs it
// (stdout a pipe this script drains), from /proc/<pid>/stat: user and system, all threads. An A/B of two
// builds alternates runs of each, since run-to-run noise on a shared machine is larger than most changes.
//
//   npm run build
//   BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/test node bench/cpu-per-request.mjs [--root DIR] [--windows N]
//
// The database needs the peers harness's `shop` schema (seed.sql of the peers folder). --root: the project
// checkout whose dist/ is run (default this one; an older commit's worktree for an A/B). Environment:
// BENCH_DURATION (s per window, 5), BENCH_WARMUP (s, 3), BENCH_CONNECTIONS (20), BENCH_SERVICE_PORT (3041),
// BENCH_SERVICE_NODE_ARGS (node options of the service).
// Linux only. The load runs in this process, as in the peers harness.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { processCpu } from './process-cpu.mjs';

const env = process.env;
const argument = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(argument('--root', here));
const windows = Number(argument('--windows', 1));
const duration = Number(env.BENCH_DURATION ?? 5);
const port = Number(env.BENCH_SERVICE_PORT ?? 3041);
if (!env.BENCH_PG_URL) throw new Error('set BENCH_PG_URL to the database holding the peers harness\'s shop schema');

const token = randomBytes(24).toString('hex');
const nodeArgs = (env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'core', 'cli.js'), 'start', '--config', join(here, 'bench', 'peers', 'service-postgres.yaml'), '--port', String(port)],
  { cwd: root, env: { ...env, NODE_ENV: 'production', BENCH_TOKEN: token }, stdio: ['ignore', 'pipe', 'ignore'] });
child.stdout.resume();
const url = `http://127.0.0.1:${port}/api/v1/query/perform/customer_by_email`;
const load = { url, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@example.com' }), connections: Number(env.BENCH_CONNECTIONS ?? 20) };

try {
  for (let ready = false, tries = 0; !ready; tries++) {
    if (tries > 240 || child.exitCode !== null) throw new Error('the service did not answer 200');
    ready = await fetch(url, { method: load.method, headers: load.headers, body: load.body }).then((response) => response.status === 200, () => false);
    if (!ready) await sleep(250);
  }
  await autocannon({ ...load, duration: Number(env.BENCH_WARMUP ?? 3) });
  for (let window = 0; window < windows; window++) {
    const before = processCpu(child.pid);
    const result = await autocannon({ ...load, duration });
    const after = processCpu(child.pid);
    const per = (key) => ((after[key] - before[key]) / result.requests.total).toFixed(1);
    const failed = result.errors + result.timeouts + result.non2xx;
    console.log(`${root}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, failed ${failed}, CPU per request: user ${per('user')} µs, system ${per('system')} µs`);
  }
} finally {
  child.kill('SIGTERM');
}
