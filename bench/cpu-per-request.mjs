// The CPU time `vdb-service start` spends per request of the peers benchmark's lookup, as a user runs it
// (stdout a pipe this script drains), from /proc: user and system of all its threads, its main thread's
// share and how often that thread waited for work, and what the PostgreSQL backends and this script's load
// generator spent on the same requests. An A/B of two builds alternates runs of each, since run-to-run
// noise on a shared machine is larger than most changes. `--baseline` measures the peers harness's raw
// node:http + pg server instead, under the same load.
//
//   npm run build
//   BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/test node bench/cpu-per-request.mjs [--root DIR] [--windows N] [--baseline]
//
// The database needs the peers harness's `shop` schema (seed.sql of the peers folder). --root: the project
// checkout whose dist/ is run (default this one; an older commit's worktree for an A/B). Environment:
// BENCH_DURATION (s per window, 5), BENCH_WARMUP (s, 3), BENCH_CONNECTIONS (20), BENCH_SERVICE_PORT (3041),
// BENCH_SERVICE_NODE_ARGS (node options of the server), PEERS_DIR (for --baseline; default ../peers).
// Linux only; PostgreSQL's CPU is read when it runs on this machine (processes named `postgres`).
// The load runs in this process, as in the peers harness.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startLookupService, untilAnswering } from './lookup-service.mjs';
import { commandCpu, mainThread, processCpu } from './process-cpu.mjs';

const env = process.env;
const argument = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(argument('--root', here));
const baseline = process.argv.includes('--baseline');
const windows = Number(argument('--windows', 1));
const duration = Number(env.BENCH_DURATION ?? 5);
const port = Number(env.BENCH_SERVICE_PORT ?? 3041);
if (!env.BENCH_PG_URL) throw new Error('set BENCH_PG_URL to the database holding the peers harness\'s shop schema');

const token = randomBytes(24).toString('hex');
const nodeArgs = (env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const connections = Number(env.BENCH_CONNECTIONS ?? 20);

function startServer() {
  if (baseline) {
    const peers = resolve(env.PEERS_DIR ?? join(here, '..', 'peers'));
    if (!existsSync(join(peers, 'baseline-server.mjs'))) throw new Error(`${peers} holds no peers harness (set PEERS_DIR)`);
    const child = spawn(process.execPath, [...nodeArgs, join(peers, 'baseline-server.mjs')],
      { cwd: peers, env: { ...env, PORT: String(port), DATABASE_URL: env.BENCH_PG_URL }, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.resume();
    const body = JSON.stringify({ email: 'ada@example.com' });
    return { child, name: 'raw baseline', load: { url: `http://127.0.0.1:${port}/`, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections } };
  }
  return { ...startLookupService({ root, port, token, nodeArgs, connections }), name: root };
}

const { child, name, load } = startServer();

function sample() {
  return { server: processCpu(child.pid), main: mainThread(child.pid), postgres: commandCpu('postgres'), load: process.cpuUsage() };
}

try {
  await untilAnswering(child, load);
  await autocannon({ ...load, duration: Number(env.BENCH_WARMUP ?? 3) });
  for (let window = 0; window < windows; window++) {
    const before = sample();
    const result = await autocannon({ ...load, duration });
    const after = sample();
    const requests = result.requests.total;
    const per = (value, digits = 1) => (value / requests).toFixed(digits);
    const failed = result.errors + result.timeouts + result.non2xx;
    const mainCpu = after.main.user + after.main.system - before.main.user - before.main.system;
    const loadCpu = after.load.user + after.load.system - before.load.user - before.load.system;
    console.log(`${name}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, failed ${failed}, `
      + `CPU per request: user ${per(after.server.user - before.server.user)} µs, system ${per(after.server.system - before.server.system)} µs `
      + `(main thread ${per(mainCpu)} µs, waits ${per(after.main.voluntary - before.main.voluntary, 3)}, preemptions ${per(after.main.nonvoluntary - before.main.nonvoluntary, 3)} per request); `
      + `postgres ${per(after.postgres - before.postgres)} µs, load generator ${per(loadCpu)} µs`);
  }
} finally {
  child.kill('SIGTERM');
}
