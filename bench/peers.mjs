// The service beside its peers, in one run: the peers harness (bench-peers.mjs of the peers folder: a raw
// node:http + pg.Pool baseline, Platformatic DB, optionally PostGraphile) measures the same one-row lookup
//
//   SELECT id, email, name, region FROM shop.customers WHERE email = $1 ORDER BY id LIMIT 5   -- 'ada@example.com'
//
// served by each, and this script adds the service as the harness's extra target: started here on its
// default config (logging.level info: one access line per request, written to a pipe this script drains,
// as a log collector would), with the bench bundle bench/peers/descriptors (VDB `shop` 1 over schema `shop`,
// the query endpoint `customer_by_email`, data role `reader`) and a bearer token, then stopped.
//
//   npm run build
//   BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/bench node bench/peers.mjs          # PostgreSQL
//   node bench/peers.mjs --pglite                                                       # PGlite
//   BENCH_PG_URL=… node bench/peers.mjs --floor     # restify + pg alone in the service's place: a restify route's ceiling
//
// PostgreSQL: the database of BENCH_PG_URL must hold the harness's `shop` schema (psql … -f seed.sql in the
// peers folder). The service syncs its data role there (database role vdb_shop_v1_reader) as it starts.
// PGlite (`--pglite` or BENCH_BACKEND=pglite): the service on an in-memory PGlite seeded from the bundle,
// against bench/peers/pglite-baseline.mjs (node:http + PGlite, same lookup); the harness cannot take a
// second baseline, so this script runs those two itself, the harness's way (warm-up, rounds rotated, medians).
//
// Environment: PEERS_DIR (the peers harness's folder, after `npm run setup` in it; default ../peers, beside
// the project), BENCH_PEERS (default `platformatic` here),
// BENCH_SERVICE_PORT (3040), BENCH_PGLITE_BASELINE_PORT (3047), BENCH_SERVICE_NODE_ARGS (node options of the
// service's process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; the profile is written as it stops), and the
// harness's own (BENCH_ROUNDS 3, BENCH_DURATION 5, BENCH_CONNECTIONS 20, BENCH_WARMUP 5, BENCH_JSON_OUT, …),
// which the PGlite run reads too. On PGlite each round also prints each process's CPU time per request (user +
// system of all its threads, from /proc/<pid>/stat; Linux only). Exits 1 when a target misses (req/s ratio, p99, errors), so a script can
// tell; the figures are printed either way.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { processCpu } from './process-cpu.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const backend = process.argv.includes('--pglite') || env.BENCH_BACKEND === 'pglite' ? 'pglite' : 'postgres';
/** `--floor` (PostgreSQL): bench/peers/restify-floor.mjs in the service's place, the most a restify route reaches here. */
const floor = process.argv.includes('--floor');
const FLOOR_PORT = Number(env.BENCH_FLOOR_PORT ?? 3048);
const SERVICE_PORT = Number(env.BENCH_SERVICE_PORT ?? 3040);
const PGLITE_BASELINE_PORT = Number(env.BENCH_PGLITE_BASELINE_PORT ?? 3047);
const EMAIL = 'ada@example.com';
const BODY = JSON.stringify({ email: EMAIL });
const EXPECTED = [{ id: 1, email: EMAIL, name: 'Ada Lovelace', region: 'EU' }];
/** A user's token: random per run, handed to the service through its config's `${env:BENCH_TOKEN}`. */
const TOKEN = randomBytes(24).toString('hex');
const SERVICE_URL = `http://127.0.0.1:${SERVICE_PORT}/api/v1/query/perform/customer_by_email`;
const SERVICE_HEADERS = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
/** Issue 12's targets: req/s against the raw baseline of the same run; p99 against the baseline's. */
const TARGET = { postgres: 0.9, pglite: 0.85 }[backend];
const P99_FACTOR = 1.25;

const children = [];

function peersDir() {
  const dir = resolve(env.PEERS_DIR ?? join(ROOT, '..', 'peers'));
  if (!existsSync(join(dir, 'bench-peers.mjs')) || !existsSync(join(dir, 'node_modules', 'autocannon'))) {
    throw new Error(`${dir} holds no peers harness with its node_modules (set PEERS_DIR; run npm run setup there)`);
  }
  return dir;
}

function portInUse(port) {
  return new Promise((done) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => { socket.destroy(); done(true); });
    socket.once('error', () => done(false));
  });
}

/** A direct child running node with `args`; its output is drained (the last lines kept for a failure). */
function startChild(name, args, extraEnv) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, NODE_ENV: 'production', ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry = { name, child, tail: [], lines: 0 };
  const keep = (data) => {
    entry.tail.push(String(data));
    if (entry.tail.length > 20) entry.tail.shift();
  };
  child.stdout.on('data', (data) => {
    for (let at = data.indexOf(10); at >= 0; at = data.indexOf(10, at + 1)) entry.lines++;
    keep(data);
  });
  child.stderr.on('data', keep);
  children.push(entry);
  return entry;
}

async function stopChildren() {
  for (const { name, child } of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    if (await Promise.race([exited.then(() => false), sleep(10_000).then(() => true)])) {
      console.error(`${name} (pid ${child.pid}) ignored SIGTERM, sending SIGKILL`);
      child.kill('SIGKILL');
      await exited;
    }
  }
}

/** Waits until `url` answers 200 with the expected row, or fails with the child's last output. */
async function waitReady(entry, url, headers, rowsOf) {
  const deadline = Date.now() + 120_000;
  let last = '';
  while (Date.now() < deadline) {
    if (entry.child.exitCode !== null) throw new Error(`${entry.name} exited with code ${entry.child.exitCode}:\n${entry.tail.join('')}`);
    try {
      const response = await fetch(url, { method: 'POST', headers, body: BODY });
      const text = await response.text();
      last = `${response.status} ${text.slice(0, 300)}`;
      if (response.status === 200) {
        if (JSON.stringify(rowsOf(JSON.parse(text))) !== JSON.stringify(EXPECTED)) throw new Error(`${entry.name}: unexpected answer ${last}`);
        return text;
      }
    } catch (error) {
      if (error.message.startsWith(`${entry.name}:`)) throw error;
      last = error.message;
    }
    await sleep(250);
  }
  throw new Error(`${entry.name} not ready after 120 s (last: ${last})\n${entry.tail.join('')}`);
}

async function startService(extraEnv) {
  if (await portInUse(SERVICE_PORT)) throw new Error(`port ${SERVICE_PORT} is taken (BENCH_SERVICE_PORT)`);
  const nodeArgs = (env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const config = join(ROOT, 'bench', 'peers', `service-${backend}.yaml`);
  const entry = startChild('vdb-service', [...nodeArgs, join(ROOT, 'dist', 'core', 'cli.js'), 'start', '--config', config, '--port', String(SERVICE_PORT)],
    { BENCH_TOKEN: TOKEN, ...extraEnv });
  const sample = await waitReady(entry, SERVICE_URL, SERVICE_HEADERS, (body) => body.rows);
  console.log(`ready  vdb-service   POST ${SERVICE_URL}  (pid ${entry.child.pid}, ${backend}, logging.level info)\n       -> ${sample.slice(0, 200)}`);
  return entry;
}

async function startFloor(pgUrl) {
  if (await portInUse(FLOOR_PORT)) throw new Error(`port ${FLOOR_PORT} is taken (BENCH_FLOOR_PORT)`);
  const url = `http://127.0.0.1:${FLOOR_PORT}/`;
  const entry = startChild('restify-floor', [join(ROOT, 'bench', 'peers', 'restify-floor.mjs')], { PORT: String(FLOOR_PORT), DATABASE_URL: pgUrl });
  await waitReady(entry, url, { 'content-type': 'application/json' }, (body) => body.rows);
  console.log(`ready  restify-floor POST ${url}  (restify + pg.Pool, nothing of the service; pid ${entry.child.pid})`);
  return entry;
}

/** CPU time so far (user + system, all threads) of process `pid`, in µs; undefined where there is no /proc. */
function cpuMicros(pid) {
  try {
    const { user, system } = processCpu(pid);
    return user + system;
  } catch {
    return undefined;
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Checks the issue's targets on the harness's summary (ratios are medians of per-round ratios). */
function verdict(summary, serviceName) {
  const service = summary[serviceName];
  const baseline = summary.baseline;
  const checks = [
    [`req/s ≥ ${TARGET}× the baseline's`, service.ratioToBaseline >= TARGET, service.ratioToBaseline.toFixed(3)],
    [`p99 ≤ ${P99_FACTOR}× the baseline's (${baseline.medianP99} ms)`, service.medianP99 <= P99_FACTOR * baseline.medianP99, `${service.medianP99} ms`],
    ['0 errors, timeouts, non-2xx', service.errors === 0, String(service.errors)],
  ];
  if (summary.platformatic) checks.push(['above Platformatic DB', service.ratioToBaseline > summary.platformatic.ratioToBaseline, `${service.ratioToBaseline.toFixed(3)} vs ${summary.platformatic.ratioToBaseline.toFixed(3)}`]);
  console.log('\ntargets (issue 12):');
  for (const [what, met, value] of checks) console.log(`  ${met ? 'met    ' : 'MISSED '} ${what}: ${value}`);
  return checks.every(([, met]) => met);
}

async function runPostgres() {
  const pgUrl = env.BENCH_PG_URL;
  if (!pgUrl) throw new Error('set BENCH_PG_URL to the database holding the peers\' shop schema (the harness\'s default is database `test`)');
  const dir = peersDir();
  const service = floor ? await startFloor(pgUrl) : await startService({ BENCH_PG_URL: pgUrl });
  const name = floor ? 'restify-floor' : 'vdb-service';
  const url = floor ? `http://127.0.0.1:${FLOOR_PORT}/` : SERVICE_URL;
  const jsonOut = env.BENCH_JSON_OUT || join(mkdtempSync(join(tmpdir(), 'vdb-peers-')), 'peers.json');
  const harness = spawn(process.execPath, [join(dir, 'bench-peers.mjs')], {
    cwd: dir,
    stdio: 'inherit',
    env: {
      ...env,
      BENCH_PG_URL: pgUrl,
      BENCH_PEERS: env.BENCH_PEERS ?? 'platformatic',
      BENCH_JSON_OUT: jsonOut,
      BENCH_EXTRA_NAME: name,
      BENCH_EXTRA_URL: url,
      BENCH_EXTRA_METHOD: 'POST',
      BENCH_EXTRA_BODY: BODY,
      ...(floor ? {} : { BENCH_EXTRA_AUTH: SERVICE_HEADERS.authorization }),
      BENCH_EXTRA_EXPECT: '"rows":[{"id":1,"email":"ada@example.com","name":"Ada Lovelace","region":"EU"}]',
    },
  });
  const code = await new Promise((done) => harness.once('exit', (exitCode) => done(exitCode ?? 1)));
  if (code !== 0) throw new Error(`the peers harness failed (exit ${code})`);
  const { summary } = JSON.parse(readFileSync(jsonOut, 'utf8'));
  if (floor) {
    console.log(`\nrestify's floor: ${summary[name].ratioToBaseline.toFixed(3)}× the baseline (the service's targets are not checked with --floor)`);
    return true;
  }
  console.log(`\nthe service wrote ${service.lines} log lines to stdout during the run (one access line per request at info)`);
  return verdict(summary, name);
}

async function runPglite() {
  const { default: autocannon } = await import('autocannon');
  const rounds = Number(env.BENCH_ROUNDS ?? 3);
  const duration = Number(env.BENCH_DURATION ?? 5);
  const connections = Number(env.BENCH_CONNECTIONS ?? 20);
  const warmup = Number(env.BENCH_WARMUP ?? 5);
  if (await portInUse(PGLITE_BASELINE_PORT)) throw new Error(`port ${PGLITE_BASELINE_PORT} is taken (BENCH_PGLITE_BASELINE_PORT)`);
  const baselineUrl = `http://127.0.0.1:${PGLITE_BASELINE_PORT}/`;
  const baselineEntry = startChild('baseline', [join(ROOT, 'bench', 'peers', 'pglite-baseline.mjs')], { PORT: String(PGLITE_BASELINE_PORT) });
  await waitReady(baselineEntry, baselineUrl, { 'content-type': 'application/json' }, (body) => body.rows);
  console.log(`ready  baseline      POST ${baselineUrl}  (node:http + PGlite, pid ${baselineEntry.child.pid})`);
  const service = await startService({});
  const targets = [
    { name: 'baseline', url: baselineUrl, headers: { 'content-type': 'application/json' }, pid: baselineEntry.child.pid },
    { name: 'vdb-service', url: SERVICE_URL, headers: SERVICE_HEADERS, pid: service.child.pid },
  ];
  const cannon = (target, seconds) => autocannon({ url: target.url, method: 'POST', headers: target.headers, body: BODY, connections, pipelining: 1, duration: seconds });
  console.log(`autocannon: ${rounds} rounds x ${duration} s, ${connections} connections, warm-up ${warmup} s per target`);
  if (warmup > 0) for (const target of targets) await cannon(target, warmup);
  const results = { baseline: [], 'vdb-service': [] };
  for (let round = 0; round < rounds; round++) {
    for (const target of targets.map((_, i) => targets[(i + round) % targets.length])) {
      const cpuBefore = cpuMicros(target.pid);
      const res = await cannon(target, duration);
      const cpu = cpuBefore === undefined ? undefined : (cpuMicros(target.pid) - cpuBefore) / Math.max(res.requests.total, 1);
      const row = { round: round + 1, rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99, errors: res.errors + res.timeouts + res.non2xx, cpu };
      results[target.name].push(row);
      console.log(`round ${row.round}  ${target.name.padEnd(13)} ${row.rps.toFixed(0).padStart(7)} req/s  p50 ${String(row.p50).padStart(4)} ms  p99 ${String(row.p99).padStart(4)} ms  errors+timeouts+non2xx ${row.errors}${cpu === undefined ? '' : `  CPU ${cpu.toFixed(0)} µs/request`}`);
    }
  }
  console.log('\nsummary (medians over rounds; ratio = median of per-round target/baseline req/s)');
  const summary = {};
  for (const target of targets) {
    const rows = results[target.name];
    summary[target.name] = {
      medianRps: median(rows.map((row) => row.rps)),
      medianP99: median(rows.map((row) => row.p99)),
      errors: rows.reduce((sum, row) => sum + row.errors, 0),
      ratioToBaseline: median(rows.map((row, i) => row.rps / results.baseline[i].rps)),
      medianCpu: rows[0].cpu === undefined ? undefined : median(rows.map((row) => row.cpu)),
    };
    const s = summary[target.name];
    console.log(`${target.name.padEnd(13)} ${s.medianRps.toFixed(0).padStart(7)} req/s  p99 ${String(s.medianP99).padStart(4)} ms  errors ${s.errors}  ratio/baseline ${s.ratioToBaseline.toFixed(3)}${s.medianCpu === undefined ? '' : `  CPU ${s.medianCpu.toFixed(0)} µs/request`}`);
  }
  console.log(`\nthe service wrote ${service.lines} log lines to stdout during the run (one access line per request at info)`);
  return verdict(summary, 'vdb-service');
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await stopChildren();
    process.exit(130);
  });
}

let code = 0;
try {
  console.log(`backend ${backend}; service ${ROOT} (dist/, built by npm run build)`);
  code = (await (backend === 'pglite' ? runPglite() : runPostgres())) ? 0 : 1;
} catch (error) {
  console.error(`\nFAILED: ${error.message}`);
  code = 1;
} finally {
  await stopChildren();
}
process.exit(code);
