// The query endpoint `POST /api/v1/query/perform/customer_orders` ({"customerId": 7}) of the real service
// against a raw baseline, measured in the same run with autocannon.
//
// The baseline is a plain node:http server that checks the same bearer token, parses the JSON body and runs
// the same SQL text with the same bound values through the same driver (pg.Pool of the same size on
// PostgreSQL; knex + knex-pglite over its own PGlite instance, seeded the same way, on PGlite), then answers
// `{rows, rowCount, columns}`. Both servers live in one child process (the idle one costs nothing); autocannon
// drives them from this process, so the load generator does not share an event loop with the server under test.
// Runs alternate (baseline, service, baseline, service by default), each after a warm-up that is discarded.
//
// Backend: PostgreSQL when VDB_TEST_POSTGRES_URL is set (its `sales` schema is dropped and re-seeded from
// descriptors/seed/retail.sql), an in-memory PGlite otherwise.
//
//   npm run build && node bench/query-endpoint.mjs
//   VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/query-endpoint.mjs
//
// Options (argv wins over env): --duration S (BENCH_DURATION, 10), --warmup S (BENCH_WARMUP, 2),
// --connections N (BENCH_CONNECTIONS, 10), --rounds N (BENCH_ROUNDS, 2; a round is one baseline run, then one
// service run), --pool N (BENCH_POOL, 10: pg pool size of both servers), --profile (BENCH_PROFILE=1: CPU-profile
// the server process during the service's measured run of the last round only, write the .cpuprofile and
// print where the time goes; BENCH_PROFILE_TARGET=baseline or both: the baseline's run instead, or too).
// Experiments: BENCH_LOG_LEVEL (the service's logging.level; default warn: like the baseline, no line per
// request; `info` adds the access line as deployed) and, on PostgreSQL,
// BENCH_BASELINE_DRIVER=knex (the baseline through knex.raw on pg, as the service, instead of pg.Pool).
// Besides req/s and latency, each run reports the server process's CPU time (user + system, from
// process.cpuUsage) per request. Exits 1 when a response is not 200 (autocannon non2xx, errors, timeouts).
import { execSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DESCRIPTORS = join(ROOT, 'descriptors');
const SEED = join(DESCRIPTORS, 'seed', 'retail.sql');
const QUERY = 'customer_orders';
const PATH = `/api/v1/query/perform/${QUERY}`;
const BODY = JSON.stringify({ customerId: 7 });
const TOKEN = 'bench-analyst-token-0123456789';
const ROLES = ['analyst'];
const DEFAULT_LIMIT = 20; // `{% set maxRows = limit ?? 20 %}` in customer_orders.yaml

/**
 * What the service renders from descriptors/queries/customer_orders.yaml for a body without `status`, with
 * knex's `?` written as pg's `$n` ($1 customerId, $2 maxRows). Checked at startup against the text the
 * service hands to its datasource (whitespace aside); a change of the definition fails the run.
 */
const BASELINE_SQL = `select o.id, o.status, o.ordered_at, o.total, count(l.line_no) as line_count
from sales.orders o
left join sales.order_lines l on l.order_id = o.id
where o.customer_id = $1
group by o.id, o.status, o.ordered_at, o.total
order by o.ordered_at desc, o.id desc
limit $2`;

/**
 * The type OIDs the service's adapters read as PostgreSQL's text (TEXT_OIDS of adapters/postgres/
 * postgres-types.ts: int8, json, date, time, timestamp, timestamptz, interval, timetz, numeric, jsonb), so
 * the baseline's driver does the same parsing work; everything else keeps the driver's parser.
 */
const TEXT_OIDS = [20, 114, 1082, 1083, 1114, 1184, 1186, 1266, 1700, 3802];

function option(name, envName, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  if (index >= 0 && process.argv[index + 1] !== undefined) return Number(process.argv[index + 1]);
  const fromEnv = process.env[envName];
  return fromEnv === undefined || fromEnv === '' ? fallback : Number(fromEnv);
}

const settings = {
  duration: option('duration', 'BENCH_DURATION', 10),
  warmup: option('warmup', 'BENCH_WARMUP', 2),
  connections: option('connections', 'BENCH_CONNECTIONS', 10),
  rounds: option('rounds', 'BENCH_ROUNDS', 2),
  pool: option('pool', 'BENCH_POOL', 10),
  profile: process.argv.includes('--profile') || process.env.BENCH_PROFILE === '1',
  /** The service's `logging.level`; `info` (the default, as deployed) writes one line per request. */
  logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
  /** PostgreSQL baseline through `pg` (pg.Pool, default) or `knex` (knex.raw on pg, the service's path). */
  baselineDriver: process.env.BENCH_BASELINE_DRIVER || 'pg',
  /** Whose measured run to profile: service (default), baseline or both. */
  profileTarget: process.env.BENCH_PROFILE_TARGET || 'service',
};
const postgresUrl = process.env.VDB_TEST_POSTGRES_URL || undefined;
const backend = postgresUrl ? 'postgres' : 'pglite';

const normalized = (sql) => sql.replace(/\s+/g, ' ').trim();

// ---------------------------------------------------------------------------------------------------------
// Server side (child process): the real service and the baseline.
// ---------------------------------------------------------------------------------------------------------


function writeConfig() {
  const retailDb = postgresUrl
    ? { adapter: 'postgres', connection: { connectionString: postgresUrl }, pool: { max: settings.pool } }
    : { adapter: 'pglite', init: ['seed/retail.sql'] };
  // the demo's VDB retail-crm reads a second datasource: on PostgreSQL its crm schema in the same database
  const crmDb = postgresUrl ? retailDb : { adapter: 'pglite', init: ['seed/crm.sql'] };
  const config = {
    instanceId: 'bench-1',
    server: { host: '127.0.0.1', port: 0 },
    descriptors: DESCRIPTORS,
    datasources: { retail_db: retailDb, crm_db: crmDb },
    auth: { scheme: 'bearer', adminRoles: ['admin'], tokens: [{ token: TOKEN, subject: 'bench', roles: ROLES }] },
    semantic: { activationFailurePolicy: 'isolate' },
    logging: { level: settings.logLevel },
  };
  const dir = mkdtempSync(join(tmpdir(), 'vdb-bench-query-'));
  const file = join(dir, 'service.yaml');
  writeFileSync(file, JSON.stringify(config, null, 2)); // JSON is YAML
  return file;
}

/** The baseline's database access: `run(bindings)` gives `{rows, fields}` as the driver returns them. */
async function openBaselineDriver() {
  if (postgresUrl) {
    const { default: pg } = await import('pg');
    const types = {
      getTypeParser(oid, format) {
        return TEXT_OIDS.includes(oid) ? (value) => value : pg.types.getTypeParser(oid, format);
      },
    };
    if (settings.baselineDriver === 'knex') {
      const { default: knex } = await import('knex');
      const client = knex({
        client: 'pg',
        connection: { connectionString: postgresUrl, types, application_name: 'vdb-bench-baseline' },
        pool: { min: 0, max: settings.pool },
      });
      const sql = BASELINE_SQL.replace(/\$\d+/g, '?');
      return { run: (bindings) => client.raw(sql, bindings), close: () => client.destroy() };
    }
    const pool = new pg.Pool({ connectionString: postgresUrl, max: settings.pool, types, application_name: 'vdb-bench-baseline' });
    return {
      run: (bindings) => pool.query(BASELINE_SQL, bindings),
      close: () => pool.end(),
    };
  }
  // PGlite as adapters/pglite/pglite-open.ts opens it: own instance, same parsers, seeded in a transaction,
  // reached through knex-pglite's single connection with knex.raw (`?` bindings).
  const { PGlite } = await import('@electric-sql/pglite');
  const { default: knex } = await import('knex');
  const { default: ClientPgLite } = await import('knex-pglite');
  const parsers = Object.fromEntries(TEXT_OIDS.map((oid) => [oid, (value) => value]));
  const db = await PGlite.create({ parsers });
  const seed = readFileSync(SEED, 'utf8');
  await db.transaction((tx) => tx.exec(seed));
  const client = knex({ client: ClientPgLite, connection: () => ({ pglite: db }) });
  const sql = BASELINE_SQL.replace(/\$\d+/g, '?');
  return {
    run: (bindings) => client.raw(sql, bindings),
    close: () => client.destroy(),
  };
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function startBaseline() {
  const driver = await openBaselineDriver();
  const expected = `Bearer ${TOKEN}`;
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== PATH) return sendJson(res, 404, { error: 'not_found' });
    if (req.headers.authorization !== expected) return sendJson(res, 401, { error: 'unauthorized' });
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      let fields;
      try {
        fields = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return sendJson(res, 400, { error: 'invalid_body' });
      }
      if (fields === null || typeof fields !== 'object' || fields.customerId === undefined) return sendJson(res, 400, { error: 'invalid_body' });
      try {
        const result = await driver.run([fields.customerId, fields.limit ?? DEFAULT_LIMIT]);
        const columns = result.fields.map((field) => ({ name: field.name, dataTypeID: field.dataTypeID }));
        sendJson(res, 200, { rows: result.rows, rowCount: result.rows.length, columns });
      } catch (error) {
        sendJson(res, 500, { error: 'query_failed', message: error.message });
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await driver.close();
    },
  };
}

/** The SQL and bindings the service hands to its datasource for one request. */
async function capturedServiceSql(service) {
  const datasource = await service.container.resolve('core.datasources').open('retail_db');
  const calls = [];
  const original = datasource.query;
  datasource.query = function (sql, bindings, options) {
    calls.push({ sql, bindings: [...bindings] });
    return original.call(this, sql, bindings, options);
  };
  try {
    await post(service.url);
  } finally {
    delete datasource.query; // back to the prototype's method
  }
  if (calls.length !== 1) throw new Error(`expected the service to run 1 statement for one request, saw ${calls.length}`);
  const [call] = calls;
  let n = 0;
  return { sql: call.sql.replace(/\?/g, () => `$${++n}`), bindings: call.bindings };
}

/**
 * The service's statement without the row bound it wraps a caller's query in (DialectBase.boundRowBytes, its
 * last bound value): the baseline runs the query as written, so the bound's cost is part of the service's.
 */
function withoutRowBound(ran) {
  const bound = /^select vdb_result\.\* from \(\n([\s\S]*)\n\) as vdb_result where case when [\s\S]*\$(\d+)[\s\S]*$/.exec(ran.sql);
  if (!bound || Number(bound[2]) !== ran.bindings.length) return ran;
  return { sql: bound[1], bindings: ran.bindings.slice(0, -1) };
}

function post(base) {
  return fetch(`${base}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: BODY })
    .then(async (response) => ({ status: response.status, body: await response.json() }));
}

async function serve() {
  process.on('disconnect', () => process.exit(0));
  const { startService } = await import('../dist/core/service.js');
  // the service's default log destination (core/logging.ts), on /dev/null instead of stdout
  const { logDestination } = await import('../dist/core/logging.js');
  const logSink = () => logDestination('/dev/null');
  const started = Date.now();
  const service = await startService({ configFile: writeConfig(), port: 0, env: process.env, logDestination: logSink() });
  const baseline = await startBaseline();
  const startupMs = Date.now() - started;

  const ran = withoutRowBound(await capturedServiceSql(service));
  if (normalized(ran.sql) !== normalized(BASELINE_SQL)) {
    throw new Error(`the service runs other SQL than the baseline:\n--- service\n${ran.sql}\n--- baseline\n${BASELINE_SQL}`);
  }
  if (JSON.stringify(ran.bindings) !== JSON.stringify([7, DEFAULT_LIMIT])) {
    throw new Error(`the service binds ${JSON.stringify(ran.bindings)}, the baseline [7, ${DEFAULT_LIMIT}]`);
  }
  const [fromService, fromBaseline] = [await post(service.url), await post(baseline.url)];
  for (const [name, response] of [['service', fromService], ['baseline', fromBaseline]]) {
    if (response.status !== 200) throw new Error(`${name} answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  const ids = (body) => JSON.stringify(body.rows.map((row) => row.id));
  if (ids(fromService.body) !== ids(fromBaseline.body)) {
    throw new Error(`service and baseline return different rows: ${ids(fromService.body)} vs ${ids(fromBaseline.body)}`);
  }

  let session;
  process.on('message', async (message) => {
    if (message.type === 'profile-start') {
      const { Session } = await import('node:inspector/promises');
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      process.send({ type: 'profile-started' });
    } else if (message.type === 'profile-stop') {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      const file = join(mkdtempSync(join(tmpdir(), 'vdb-bench-profile-')), `${message.target}-${backend}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      process.send({ type: 'profile-stopped', file });
    } else if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ type: 'cpu', micros: user + system });
    } else if (message.type === 'stop') {
      await Promise.all([service.close(), baseline.close()]);
      process.exit(0);
    }
  });
  process.send({
    type: 'ready',
    serviceUrl: service.url,
    baselineUrl: baseline.url,
    startupMs,
    sql: ran.sql,
    bindings: ran.bindings,
    rowCount: fromService.body.rowCount,
    sampleRow: fromService.body.rows[0],
    baselineSampleRow: fromBaseline.body.rows[0],
  });
}

// ---------------------------------------------------------------------------------------------------------
// Driver side (this process): seeding, autocannon, the report.
// ---------------------------------------------------------------------------------------------------------

async function seedPostgres() {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query('drop schema if exists sales cascade');
    await client.query(readFileSync(SEED, 'utf8'));
    await client.query('drop schema if exists crm cascade');
    await client.query(readFileSync(join(DESCRIPTORS, 'seed', 'crm.sql'), 'utf8'));
    await client.query('commit');
    const { rows } = await client.query('select version()');
    return rows[0].version.split(' on ')[0];
  } finally {
    await client.end();
  }
}

function startServer() {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', ...process.argv.slice(2)], { stdio: 'inherit' });
  const waiting = new Map();
  child.on('message', (message) => {
    const waiter = waiting.get(message.type);
    if (waiter) {
      waiting.delete(message.type);
      waiter.resolve(message);
    }
  });
  child.on('exit', (code) => {
    for (const [type, waiter] of waiting) waiter.reject(new Error(`the server process exited (code ${code}) while waiting for ${type}`));
    waiting.clear();
  });
  const next = (type) => new Promise((resolve, reject) => waiting.set(type, { resolve, reject }));
  return { child, next };
}

async function load(url, seconds) {
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({
    url: `${url}${PATH}`,
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: BODY,
    connections: settings.connections,
    duration: seconds,
  });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0 || result['2xx'] === 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts, ${result['2xx']} 2xx ` +
      `(status codes: ${JSON.stringify(result.statusCodeStats)})`);
  }
  return result;
}

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Self and inclusive sample shares per file/package and per function of a V8 CPU profile. */
function summarizeProfile(target, file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const where = (callFrame) => {
    const { url, functionName } = callFrame;
    if (!url) return functionName.startsWith('(') ? functionName : '(native)';
    if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
    const modules = url.lastIndexOf('/node_modules/');
    if (modules >= 0) {
      const rest = url.slice(modules + 14).split('/');
      return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    }
    const dist = url.indexOf('/dist/');
    if (dist >= 0) return url.slice(dist + 6).replace(/\.js$/, '.ts');
    return url.replace(/^.*\/bench\//, 'bench/');
  };
  const fn = (callFrame) => `${callFrame.functionName || '(anonymous)'} ${where(callFrame)}:${callFrame.lineNumber + 1}`;
  const selfFile = new Map();
  const selfFn = new Map();
  const totalFile = new Map();
  const totalFn = new Map();
  const bump = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
  let samples = 0;
  let idle = 0;
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (node.callFrame.functionName === '(idle)') {
      idle++;
      continue;
    }
    samples++;
    bump(selfFile, where(node.callFrame));
    bump(selfFn, fn(node.callFrame));
    const files = new Set();
    const fns = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at).callFrame;
      if (frame.functionName === '(root)') continue;
      files.add(where(frame));
      fns.add(fn(frame));
    }
    for (const key of files) bump(totalFile, key);
    for (const key of fns) bump(totalFn, key);
  }
  const top = (map, count, filter = () => true) => [...map.entries()].filter(([key]) => filter(key)).sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([key, hits]) => `  ${(100 * hits / samples).toFixed(1).padStart(5)}%  ${key}`).join('\n');
  const ours = (key) => /^(core|adapters|plugins)\//.test(key) || / (core|adapters|plugins)\//.test(key);
  console.log(`\nCPU profile of the server process during the ${target}'s measured run: ${file}`);
  console.log(`${samples} busy samples, ${idle} idle (${(100 * idle / (samples + idle)).toFixed(1)}% idle). Shares are of busy samples.`);
  console.log(`\nSelf time by file or package:\n${top(selfFile, 20)}`);
  console.log(`\nSelf time by function:\n${top(selfFn, 25)}`);
  console.log(`\nInclusive time, files of core/, adapters/, plugins/:\n${top(totalFile, 25, ours)}`);
  console.log(`\nInclusive time, functions of core/, adapters/, plugins/:\n${top(totalFn, 30, ours)}`);
  console.log(`\nInclusive time by file or package (all):\n${top(totalFile, 30)}`);
}

async function drive() {
  const gitRev = (() => {
    try {
      const rev = execSync('git rev-parse --short HEAD', { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      const dirty = execSync('git status --porcelain --untracked-files=no', { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
      return dirty ? `${rev} + uncommitted changes` : rev;
    } catch {
      return 'unknown (not a git checkout)';
    }
  })();
  let database = 'PGlite (in memory, one connection)';
  if (postgresUrl) database = `${await seedPostgres()} at ${postgresUrl.replace(/\/\/[^@/]*@/, '//…@')}, pool max ${settings.pool}`;
  console.log(`backend: ${backend} — ${database}`);
  const baselineDriver = postgresUrl ? (settings.baselineDriver === 'knex' ? 'knex.raw on pg' : 'pg.Pool') : 'knex.raw on knex-pglite';
  console.log(`node ${process.version}, commit ${gitRev}; ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s ` +
    `per run, ${settings.rounds} rounds; baseline via ${baselineDriver}; service logging.level ${settings.logLevel}${settings.profile ? '; profiling' : ''}`);

  const { child, next } = startServer();
  const ready = await next('ready');
  console.log(`server process up in ${fmt(ready.startupMs)} ms; the service runs (bindings ${JSON.stringify(ready.bindings)}):\n  ${normalized(ready.sql)}`);
  console.log(`${ready.rowCount} rows; service row: ${JSON.stringify(ready.sampleRow)}; baseline row: ${JSON.stringify(ready.baselineSampleRow)}\n`);

  const runs = [];
  const profileFiles = [];
  try {
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [target, url] of [['baseline', ready.baselineUrl], ['service', ready.serviceUrl]]) {
        if (settings.warmup > 0) await load(url, settings.warmup);
        // The service's run of the last round, once everything is warm.
        const profiling = settings.profile && round === settings.rounds && [target, 'both'].includes(settings.profileTarget);
        if (profiling) {
          child.send({ type: 'profile-start' });
          await next('profile-started');
        }
        const cpu = async () => {
          child.send({ type: 'cpu' });
          return (await next('cpu')).micros;
        };
        const cpuBefore = await cpu();
        const result = await load(url, settings.duration);
        const cpuMicros = (await cpu()) - cpuBefore;
        if (profiling) {
          child.send({ type: 'profile-stop', target });
          profileFiles.push({ target, file: (await next('profile-stopped')).file });
        }
        const run = {
          round, target, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total,
          cpuPerRequest: cpuMicros / result.requests.total, cpuShare: cpuMicros / 1e6 / settings.duration,
        };
        runs.push(run);
        console.log(`round ${round} ${target.padEnd(8)} ${fmt(run.rps).padStart(7)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  ` +
          `server CPU ${fmt(run.cpuPerRequest)} µs/request (${fmt(100 * run.cpuShare)}% of a core)  (${fmt(run.total)} requests, all 200)`);
      }
    }
  } finally {
    child.send({ type: 'stop' });
  }

  const of = (target) => runs.filter((run) => run.target === target);
  const baseline = of('baseline');
  const service = of('service');
  const ratio = mean(service.map((run) => run.rps)) / mean(baseline.map((run) => run.rps));
  const cell = (list, key) => list.map((run) => fmt(run[key])).join(' / ');
  const cpuRatio = mean(service.map((run) => run.cpuPerRequest)) / mean(baseline.map((run) => run.cpuPerRequest));
  console.log(`\n| ${backend} | req/s (each run) | mean req/s | p50 ms | p99 ms | server CPU µs/request |`);
  console.log('|---|---|---|---|---|---|');
  for (const [name, list] of [['raw baseline', baseline], ['service', service]]) {
    console.log(`| ${name} | ${cell(list, 'rps')} | ${fmt(mean(list.map((run) => run.rps)))} | ${cell(list, 'p50')} | ${cell(list, 'p99')} | ${cell(list, 'cpuPerRequest')} |`);
  }
  console.log(`| service / baseline | | **${ratio.toFixed(2)}×** | | | ${cpuRatio.toFixed(2)}× |`);
  console.log(`\nservice/baseline req/s: ${ratio.toFixed(2)}× — target ≥ 0.90×: ${ratio >= 0.9 ? 'met' : 'NOT met'}`);
  for (const { target, file } of profileFiles) summarizeProfile(target, file);
}

if (process.argv.includes('--serve')) {
  serve().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  drive().catch((error) => {
    console.error(`\nFAILED: ${error.message}`);
    process.exit(1);
  });
}
