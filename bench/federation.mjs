// Federation against one PostgreSQL (docs/federation.md): customers (100,000) and regions in one database,
// orders (250,000) and order lines (1,000,000) in another, each a datasource of one VDB; the same tables
// in a third database, where the same statements run on PostgreSQL alone (the baseline).
//
//   npm run build && VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/federation.mjs
//
// Two statements, each timed through the SQL door (node-postgres, as the caller's data role; the service in a
// child process) and on the baseline database directly, alternating:
//   - selective: one customer's orders and their lines, the customer picked by e-mail (a bound value): the
//     dependent join reads only that customer's orders and lines (federation.semiJoinMaxKeys);
//   - full: revenue and lines by region over every order line (1,000,000 lines, 100,000 customers): the lines
//     joined to their orders and summed by customer on the shop database, one row per customer.
// Then the engines side by side: the full aggregation's relations are read whole once (what a plan without
// pushed joins streamed), loaded and evaluated by DuckDB (the service's engine; the plan has no engine switch)
// and by PGlite (PostgreSQL itself as the engine), each running the original statement.
// The service's peak RSS (VmHWM) is read from /proc after the runs, beside `federation.memoryLimit`: reset
// (clear_refs) once the SQL door's catalog mirror has made its PGlite snapshot, whose initdb alone peaks near
// 700 MB, so that the peak is the plans' own; the peak before the reset is printed too.
//
// Options (env): BENCH_RUNS (selective runs per side, 30; full runs per side, a tenth of it, at least 3),
// BENCH_SHIP_MAX_ROWS (the service's federation.shipMaxRows; 0: the engine answers every statement),
// BENCH_WARMUP (untimed runs of the selective statement on each side before the timed ones, 500),
// BENCH_MEMORY (the service's federation.memoryLimit, 512MB), BENCH_KEEP=1 (keep the three databases for
// the next run: the data takes a minute to write). Databases fedbench_crm, fedbench_shop, fedbench_single
// are created on the server of the URL, and the database role vdb_fedbench_v1_reader the service syncs.
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { databaseUrl, FULL, SELECTIVE, TOKEN, writeFederationConfig } from './federation-service.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CUSTOMERS = 100_000;
const ORDERS = 250_000;
const LINES_PER_ORDER = 4;
const runs = Number(process.env.BENCH_RUNS ?? 30);
const warmup = Number(process.env.BENCH_WARMUP ?? 500);
const memoryLimit = process.env.BENCH_MEMORY ?? '512MB';

const SCHEMAS = {
  crm: [
    `create table crm.regions (name text primary key, manager text not null)`,
    `insert into crm.regions select r, 'manager of ' || r from unnest(array['North', 'South', 'East', 'West', 'Central']) as r`,
    `create table crm.customers (id integer primary key, email text not null unique, name text not null, region text not null)`,
    `insert into crm.customers select i, 'customer' || i || '@example.com', 'Customer ' || i, (array['North', 'South', 'East', 'West', 'Central'])[i % 5 + 1]
     from generate_series(1, ${CUSTOMERS}) as i`,
  ],
  shop: [
    `create table shop.orders (id integer primary key, customer_id integer not null, ordered_at timestamptz not null, total numeric(12, 2) not null)`,
    `insert into shop.orders select i, (i * 7919) % ${CUSTOMERS} + 1, timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute', (i % 1000) / 10.0 + 5
     from generate_series(1, ${ORDERS}) as i`,
    `create index on shop.orders (customer_id)`,
    `create table shop.order_lines (order_id integer not null, line_no integer not null, quantity integer not null, unit_price numeric(10, 2) not null, primary key (order_id, line_no))`,
    `insert into shop.order_lines select o, n, (o + n) % 9 + 1, ((o * n) % 4000) / 100.0 + 0.5
     from generate_series(1, ${ORDERS}) as o cross join generate_series(1, ${LINES_PER_ORDER}) as n`,
  ],
};


/** The child: the service with the SQL front door on a free port; tells the parent the port, then its peak RSS when asked. */
async function serve(configFile) {
  const { startService } = await import(join(ROOT, 'dist/core/service.js'));
  const { Writable } = await import('node:stream');
  const service = await startService({ configFile, port: 0, sqlPort: 0, env: {}, logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  process.send({ port: service.sqlAddress.port });
  process.on('message', async () => {
    await service.close();
    process.exit(0);
  });
}


async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The three databases, written unless BENCH_KEEP found them complete. */
async function prepare(url) {
  const wanted = { fedbench_crm: ['crm'], fedbench_shop: ['shop'], fedbench_single: ['crm', 'shop'] };
  for (const [database, schemas] of Object.entries(wanted)) {
    const complete = await withClient(url, async (admin) => {
      const exists = (await admin.query('select 1 from pg_database where datname = $1', [database])).rowCount > 0;
      if (exists && process.env.BENCH_KEEP) {
        const lines = schemas.includes('shop') ? 'shop.order_lines' : 'crm.customers';
        const count = await withClient(databaseUrl(url, database), (client) => client.query(`select count(*)::int as n from ${lines}`).then((r) => r.rows[0].n, () => 0));
        if (count === (schemas.includes('shop') ? ORDERS * LINES_PER_ORDER : CUSTOMERS)) return true;
      }
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.query(`create database ${database}`);
      return false;
    });
    if (complete) continue;
    await withClient(databaseUrl(url, database), async (client) => {
      for (const schema of schemas) {
        await client.query(`create schema ${schema}`);
        for (const statement of SCHEMAS[schema]) await client.query(statement);
      }
      await client.query('vacuum analyze');
    });
  }
}

async function startDoor(url) {
  const shipMaxRows = process.env.BENCH_SHIP_MAX_ROWS === undefined ? undefined : Number(process.env.BENCH_SHIP_MAX_ROWS);
  const configFile = writeFederationConfig(url, { memoryLimit, maxSourceRows: ORDERS * LINES_PER_ORDER, shipMaxRows });
  const child = fork(fileURLToPath(import.meta.url), ['--serve', configFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the service stopped (exit ${code})`)));
  });
  return { child, config: { host: '127.0.0.1', port, database: 'fedbench@1', user: 'bench', password: TOKEN } };
}

/** Milliseconds of each of `count` runs of `sql` on `client`, and the last answer's rows. */
async function timed(client, sql, values, count) {
  const times = [];
  let rows;
  for (let i = 0; i < count; i += 1) {
    const started = process.hrtime.bigint();
    rows = (await client.query({ text: sql, values, rowMode: 'array' })).rows;
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { times, rows };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`;

function currentRss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
}

/** CPU milliseconds (user and system) the process has used: what holds on a loaded machine, where wall time does not. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, fields 14 and 15 of stat, in clock ticks (100 per second on Linux)
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resets the peak RSS to the current one (proc(5): clear_refs 5) and answers it. */
function resetPeak(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return currentRss(pid);
}

function peakRss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
}

async function main() {
  const url = process.env.VDB_TEST_POSTGRES_URL;
  if (!url) {
    console.error('set VDB_TEST_POSTGRES_URL: federation is compared with PostgreSQL itself');
    process.exit(1);
  }
  let started = Date.now();
  await prepare(url);
  console.log(`data ready in ${((Date.now() - started) / 1000).toFixed(1)} s; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  const { child, config } = await startDoor(url);
  const door = new pg.Client(config);
  const single = new pg.Client({ connectionString: databaseUrl(url, 'fedbench_single') });
  const email = ['customer4242@example.com'];
  const fullRuns = Math.max(3, Math.round(runs / 10));
  try {
    await door.connect();
    await single.connect();
    // a catalog statement waits for the mirror (its snapshot is made in the background after startup)
    await door.query('select count(*) from pg_catalog.pg_namespace');
    const mirrorPeak = peakRss(child.pid);
    const startedRss = resetPeak(child.pid);
    const plans = {};
    for (const [name, sql, values] of [['selective', SELECTIVE, email], ['full', FULL, []]]) {
      plans[name] = JSON.parse(Object.values((await door.query({ text: `explain ${sql}`, values })).rows[0] ?? {})[0] ?? 'null');
      console.log(`${name}: the plan reads ${(plans[name]?.sources ?? []).map((source) => `${source.datasource}${source.dependentOn ? ` (dependent on ${source.dependentOn})` : ''}: ${source.sql}`).join('; ')}`);
      const shipping = plans[name]?.shipping;
      if (shipping) console.log(`${name}: or, where few rows are read of ${shipping.shipped.join(', ')}, they are sent to ${shipping.datasource}, which answers: ${shipping.sql.replace(/\s+/g, ' ')}`);
      // one run of each first: the answers must be the same, and neither side is timed cold
      const [mine, theirs] = [await timed(door, sql, values, 1), await timed(single, sql, values, 1)];
      // decimals compared in their canonical form: the door sends `68.9` for PostgreSQL's `68.90` (docs/sql.md#types)
      const canonical = (rows) => JSON.stringify(rows, (_key, value) => (typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value));
      if (canonical(mine.rows) !== canonical(theirs.rows)) {
        console.log(`${name}: the answers differ\n  door: ${canonical(mine.rows).slice(0, 400)}\n  PostgreSQL: ${canonical(theirs.rows).slice(0, 400)}`);
      }
      // the selective statement in its steady state on both sides: the service's code optimized by V8, each pooled
      // connection's prepared statements past the five runs after which PostgreSQL may keep a generic plan
      if (name === 'selective') {
        for (let i = 0; i < warmup; i += 1) await Promise.all([timed(door, sql, values, 1), timed(single, sql, values, 1)]);
      }
    }
    const results = {};
    for (const [name, sql, values, count] of [['selective', SELECTIVE, email, runs], ['full', FULL, [], fullRuns]]) {
      const federated = [];
      const baseline = [];
      let serviceCpu = 0;
      for (let i = 0; i < count; i += 1) {
        const cpu = cpuMs(child.pid);
        federated.push(...(await timed(door, sql, values, 1)).times);
        serviceCpu += cpuMs(child.pid) - cpu;
        baseline.push(...(await timed(single, sql, values, 1)).times);
      }
      results[name] = { federated: median(federated), baseline: median(baseline) };
      console.log(`${name.padEnd(9)} federated ${ms(results[name].federated)}, one PostgreSQL ${ms(results[name].baseline)}: `
        + `${(results[name].federated / results[name].baseline).toFixed(2)}× (median of ${count}); the service's CPU ${ms(serviceCpu / count)} per statement`);
    }
    console.log(`load average after the runs ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    const rss = peakRss(child.pid);
    console.log(`the service's RSS: peak ${(mirrorPeak / 2 ** 20).toFixed(0)} MB while starting (the SQL door's catalog mirror), ${(startedRss / 2 ** 20).toFixed(0)} MB once started, `
      + `peak ${(rss / 2 ** 20).toFixed(0)} MB over the runs (federation.memoryLimit ${memoryLimit})`);
    await engines(url);
  } finally {
    await door.end().catch(() => undefined);
    await single.end().catch(() => undefined);
    child.send('stop');
    await new Promise((resolve) => child.once('exit', resolve));
    if (!process.env.BENCH_KEEP) {
      await withClient(url, async (admin) => {
        for (const database of ['fedbench_crm', 'fedbench_shop', 'fedbench_single']) await admin.query(`drop database if exists ${database} with (force)`);
        const role = await admin.query("select 1 from pg_catalog.pg_roles where rolname = 'vdb_fedbench_v1_reader'");
        if (role.rowCount > 0) await admin.query('drop role vdb_fedbench_v1_reader');
      });
    }
  }
}

/**
 * The engines side by side on the full aggregation over its relations read whole (1,350,000 rows, what a plan
 * without a pushed join streams): read once from the sources, then loaded and evaluated by DuckDB and by
 * PGlite, each running the original statement over tables of the same names.
 */
async function engines(url) {
  const reads = [
    { database: 'fedbench_shop', schema: 'shop', name: 'order_lines', sql: 'select order_id, quantity, unit_price from shop.order_lines' },
    { database: 'fedbench_shop', schema: 'shop', name: 'orders', sql: 'select id, customer_id from shop.orders' },
    { database: 'fedbench_crm', schema: 'crm', name: 'customers', sql: 'select id, region from crm.customers' },
  ];
  const sources = [];
  for (const read of reads) {
    const result = await withClient(databaseUrl(url, read.database), (client) => client.query({ text: read.sql, rowMode: 'array', types: { getTypeParser: () => (value) => value } }));
    sources.push({ ...read, fields: result.fields, rows: result.rows });
  }
  const typeOf = (oid) => ({ 23: ['INTEGER', 'integer'], 20: ['BIGINT', 'bigint'], 1700: ['DECIMAL(10,2)', 'numeric(10, 2)'], 25: ['VARCHAR', 'text'] })[oid];
  const rows = sources.reduce((sum, source) => sum + source.rows.length, 0);

  const elapsed = (from, to) => Number(to - from) / 1e6;
  const duckStart = process.hrtime.bigint();
  const instance = await DuckDBInstance.create(':memory:', { memory_limit: memoryLimit, integer_division: 'true' });
  const duck = await instance.connect();
  for (const source of sources) {
    await duck.run(`create schema if not exists ${source.schema}`);
    await duck.run(`create table ${source.schema}.${source.name} (${source.fields.map((field) => `"${field.name}" ${typeOf(field.dataTypeID)[0]}`).join(', ')})`);
    const appender = await duck.createAppender(source.name, source.schema);
    // as the service appends: integers as numbers, decimals and text as their text
    const integers = source.fields.map((field) => field.dataTypeID === 23);
    for (const row of source.rows) {
      row.forEach((value, position) => {
        if (value === null) appender.appendNull();
        else if (integers[position]) appender.appendInteger(Number(value));
        else appender.appendVarchar(value);
      });
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
  }
  const duckLoaded = process.hrtime.bigint();
  const duckRows = (await duck.runAndReadAll(FULL)).getRows();
  const duckDone = process.hrtime.bigint();
  duck.closeSync();

  const liteStart = process.hrtime.bigint();
  const lite = await PGlite.create();
  const liteCreated = process.hrtime.bigint();
  for (const source of sources) {
    await lite.exec(`create schema if not exists ${source.schema}`);
    await lite.exec(`create table ${source.schema}.${source.name} (${source.fields.map((field) => `"${field.name}" ${typeOf(field.dataTypeID)[1]}`).join(', ')})`);
    const csv = source.rows.map((row) => row.map((value) => (value === null ? '' : `"${value.replace(/"/g, '""')}"`)).join(',')).join('\n');
    await lite.query(`copy ${source.schema}.${source.name} from '/dev/blob' with (format csv)`, [], { blob: new Blob([csv]) });
  }
  const liteLoaded = process.hrtime.bigint();
  const liteRows = (await lite.query(FULL, [], { rowMode: 'array' })).rows;
  const liteDone = process.hrtime.bigint();
  await lite.close();

  const same = JSON.stringify(duckRows.map((row) => row.map(String))) === JSON.stringify(liteRows.map((row) => row.map(String)));
  console.log(`engines over the full aggregation's ${rows} rows of its relations read whole (read once from the sources, not timed here):`);
  console.log(`  DuckDB: load ${elapsed(duckStart, duckLoaded).toFixed(0)} ms, evaluate ${elapsed(duckLoaded, duckDone).toFixed(0)} ms`);
  console.log(`  PGlite: start ${elapsed(liteStart, liteCreated).toFixed(0)} ms, load (COPY) ${elapsed(liteCreated, liteLoaded).toFixed(0)} ms, evaluate ${elapsed(liteLoaded, liteDone).toFixed(0)} ms`);
  console.log(`  the same answer: ${same ? 'yes' : `no: DuckDB ${JSON.stringify(duckRows).slice(0, 200)}, PGlite ${JSON.stringify(liteRows).slice(0, 200)}`}`);
}

if (process.argv[2] === '--serve') await serve(process.argv[3]);
else await main();
