// The semantic query route `POST /api/v1/semantic/vdbs/retail/versions/1/query` of the real service against a
// raw baseline that runs the same compiled SQL, measured in the same run with autocannon (as
// bench/query-endpoint.mjs does for the query endpoint).
//
// The query: revenue and order count by region and month for orders whose status is in a structured filter's
// values (bound). The service compiles it once (the statement is cached per query shape), checks the caller's
// grants, and runs it as the caller. The baseline is a plain node:http server that checks the same bearer
// token, parses the JSON body, takes the filter's values from it and runs the statement the service's
// `?explain=true` answered, with those values, through the same driver (pg.Pool on PostgreSQL; knex-pglite
// over its own PGlite instance, seeded the same way, on PGlite), then answers `{rows, rowCount, columns}`.
// Both servers live in one child process; autocannon drives them from this process. Runs alternate
// (baseline, service, baseline, service by default), each after a discarded warm-up.
//
// Backend: PostgreSQL when VDB_TEST_POSTGRES_URL is set (its `sales` schema is dropped and re-seeded from
// descriptors/seed/retail.sql), an in-memory PGlite otherwise.
//
//   npm run build && node bench/semantic-query.mjs
//   VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/semantic-query.mjs
//   node --cpu-prof --cpu-prof-dir=/tmp/profiles bench/semantic-query.mjs   (the child inherits the flag)
//
// Options (argv wins over env): --duration S (BENCH_DURATION, 10), --warmup S (BENCH_WARMUP, 2),
// --connections N (BENCH_CONNECTIONS, 10), --rounds N (BENCH_ROUNDS, 2), --pool N (BENCH_POOL, 10).
// Each run also reports the server process's CPU time per request. Exits 1 when a response is not 200.
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DESCRIPTORS = join(ROOT, 'descriptors');
const SEED = join(DESCRIPTORS, 'seed', 'retail.sql');
const PATH = '/api/v1/semantic/vdbs/retail/versions/1/query';
const QUERY = {
  dimensions: ['customers.region', { field: 'orders.ordered_at', grain: 'month', alias: 'month' }],
  measures: ['revenue', 'order_count'],
  where: [{ field: 'orders.status', operator: 'in', values: ['paid', 'shipped'] }],
  orderBy: [{ field: 'region', direction: 'asc' }, { field: 'month', direction: 'asc' }],
};
const BODY = JSON.stringify(QUERY);
const TOKEN = 'bench-analyst-token-0123456789';
/** As the service's PostgreSQL and PGlite adapters read them: int8, json, date, time(stamp)(tz), interval, numeric, jsonb as text. */
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
};
const postgresUrl = process.env.VDB_TEST_POSTGRES_URL || undefined;
const backend = postgresUrl ? 'postgres' : 'pglite';

// --- server side (child process) ---------------------------------------------------------------------------

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
    auth: { scheme: 'bearer', adminRoles: ['admin'], tokens: [{ token: TOKEN, subject: 'bench', roles: ['analyst'] }] },
    semantic: { activationFailurePolicy: 'isolate' },
    logging: { level: 'warn' },
  };
  const file = join(mkdtempSync(join(tmpdir(), 'vdb-bench-semantic-')), 'service.yaml');
  writeFileSync(file, JSON.stringify(config, null, 2)); // JSON is YAML
  return file;
}

/** The baseline's database access: `run(sql, bindings)` with `?` placeholders gives `{rows, fields}`. */
async function openBaselineDriver() {
  if (postgresUrl) {
    const { default: pg } = await import('pg');
    const types = { getTypeParser: (oid, format) => (TEXT_OIDS.includes(oid) ? (value) => value : pg.types.getTypeParser(oid, format)) };
    const pool = new pg.Pool({ connectionString: postgresUrl, max: settings.pool, types, application_name: 'vdb-bench-baseline' });
    return {
      prepare: (sql) => {
        let n = 0;
        const text = sql.replace(/\?/g, () => `$${++n}`);
        return (bindings) => pool.query(text, bindings);
      },
      close: () => pool.end(),
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { default: knex } = await import('knex');
  const { default: ClientPgLite } = await import('knex-pglite');
  const db = await PGlite.create({ parsers: Object.fromEntries(TEXT_OIDS.map((oid) => [oid, (value) => value])) });
  await db.transaction((tx) => tx.exec(readFileSync(SEED, 'utf8')));
  const client = knex({ client: ClientPgLite, connection: () => ({ pglite: db }) });
  return { prepare: (sql) => (bindings) => client.raw(sql, bindings), close: () => client.destroy() };
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function startBaseline(sql) {
  const driver = await openBaselineDriver();
  const run = driver.prepare(sql);
  const expected = `Bearer ${TOKEN}`;
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== PATH) return sendJson(res, 404, { error: 'not_found' });
    if (req.headers.authorization !== expected) return sendJson(res, 401, { error: 'unauthorized' });
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      let values;
      try {
        values = JSON.parse(Buffer.concat(chunks).toString('utf8')).where[0].values;
      } catch {
        return sendJson(res, 400, { error: 'invalid_body' });
      }
      try {
        const result = await run(values);
        sendJson(res, 200, { rows: result.rows, rowCount: result.rows.length, columns: result.fields.map((field) => ({ name: field.name })) });
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

function post(url, again = true) {
  return fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: BODY })
    .then(async (response) => ({ status: response.status, body: await response.json() }))
    // the server may have closed the kept-alive connection while the baseline was being seeded (ECONNRESET)
    .catch((error) => (again && error.cause?.code === 'ECONNRESET' ? post(url, false) : Promise.reject(error)));
}

async function serve() {
  process.on('disconnect', () => process.exit(0));
  const { startService } = await import('../dist/core/service.js');
  const { logDestination } = await import('../dist/core/logging.js');
  const service = await startService({ configFile: writeConfig(), port: 0, env: process.env, logDestination: logDestination('/dev/null') });
  const explained = await post(`${service.url}${PATH}?explain=true`);
  if (explained.status !== 200) throw new Error(`explain answered ${explained.status}: ${JSON.stringify(explained.body)}`);
  const { sql, params } = explained.body;
  if (JSON.stringify(params) !== JSON.stringify(QUERY.where[0].values)) throw new Error(`the statement binds ${JSON.stringify(params)}, not the filter's values`);
  const baseline = await startBaseline(sql);
  const [fromService, fromBaseline] = [await post(`${service.url}${PATH}`), await post(`${baseline.url}${PATH}`)];
  for (const [name, response] of [['service', fromService], ['baseline', fromBaseline]]) {
    if (response.status !== 200) throw new Error(`${name} answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  // The service encodes values by logical type (decimals and timestamps in its own text form): compared as numbers and instants.
  const same = (rows) => JSON.stringify(rows.map((row) => [row.region, Date.parse(row.month.replace(' ', 'T').replace(/\+00$/, 'Z')), Number(row.revenue), Number(row.order_count)]));
  if (same(fromService.body.rows) !== same(fromBaseline.body.rows)) {
    throw new Error(`service and baseline return different rows:\n${JSON.stringify(fromService.body.rows)}\n${JSON.stringify(fromBaseline.body.rows)}`);
  }
  process.on('message', async (message) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ type: 'cpu', micros: user + system });
    } else if (message.type === 'stop') {
      await Promise.all([service.close(), baseline.close()]);
      process.exit(0);
    }
  });
  process.send({ type: 'ready', serviceUrl: service.url, baselineUrl: baseline.url, sql, params, rowCount: fromService.body.rowCount });
}

// --- driver side (this process) ----------------------------------------------------------------------------

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
  } finally {
    await client.end();
  }
}

function startServer() {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', ...process.argv.slice(2)], { stdio: 'inherit' });
  const waiting = new Map();
  child.on('message', (message) => {
    const waiter = waiting.get(message.type);
    waiting.delete(message.type);
    waiter?.resolve(message);
  });
  child.on('exit', (code) => {
    for (const [type, waiter] of waiting) waiter.reject(new Error(`the server process exited (code ${code}) while waiting for ${type}`));
    waiting.clear();
  });
  return { child, next: (type) => new Promise((resolve, reject) => waiting.set(type, { resolve, reject })) };
}

async function load(url, seconds) {
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({
    url: `${url}${PATH}`, method: 'POST', body: BODY, connections: settings.connections, duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  });
  if (result.non2xx + result.errors + result.timeouts > 0 || result['2xx'] === 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts, ${result['2xx']} 2xx`);
  }
  return result;
}

const fmt = (n) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

async function drive() {
  if (postgresUrl) await seedPostgres();
  console.log(`backend: ${backend}; node ${process.version}; ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s per run, ${settings.rounds} rounds`);
  const { child, next } = startServer();
  const ready = await next('ready');
  console.log(`both run (bindings ${JSON.stringify(ready.params)}, ${ready.rowCount} rows):\n  ${ready.sql}\n`);
  const runs = [];
  try {
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [target, url] of [['baseline', ready.baselineUrl], ['service', ready.serviceUrl]]) {
        if (settings.warmup > 0) await load(url, settings.warmup);
        const cpu = async () => (child.send({ type: 'cpu' }), (await next('cpu')).micros);
        const before = await cpu();
        const result = await load(url, settings.duration);
        const run = { target, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu: ((await cpu()) - before) / result.requests.total };
        runs.push(run);
        console.log(`round ${round} ${target.padEnd(8)} ${fmt(run.rps).padStart(7)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  server CPU ${fmt(run.cpu)} µs/request`);
      }
    }
  } finally {
    child.send({ type: 'stop' });
  }
  const of = (target) => runs.filter((run) => run.target === target);
  const ratio = mean(of('service').map((run) => run.rps)) / mean(of('baseline').map((run) => run.rps));
  console.log(`\n| ${backend} | req/s (each run) | mean req/s | p50 ms | p99 ms | server CPU µs/request |`);
  console.log('|---|---|---|---|---|---|');
  for (const [name, list] of [['raw baseline', of('baseline')], ['semantic query route', of('service')]]) {
    const cell = (key) => list.map((run) => fmt(run[key])).join(' / ');
    console.log(`| ${name} | ${cell('rps')} | ${fmt(mean(list.map((run) => run.rps)))} | ${cell('p50')} | ${cell('p99')} | ${cell('cpu')} |`);
  }
  console.log(`\nroute/baseline req/s: ${ratio.toFixed(2)}× — target ≥ 0.80×: ${ratio >= 0.8 ? 'met' : 'NOT met'}`);
}

const main = process.argv.includes('--serve') ? serve : drive;
main().catch((error) => {
  console.error(`\nFAILED: ${error.stack ?? error.message}`);
  process.exit(1);
});
