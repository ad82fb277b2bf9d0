// The SQL front door against PostgreSQL itself, in one run: node-postgres clients look one row up by primary
// key (`select id, name, region from sql_door_bench.customers where id = $1`, a random id each time, the
// extended protocol) for a fixed time, first on PostgreSQL directly, then through the door (the service in a
// child process, as the caller's data role, over the same database), alternating rounds. Reports queries/s
// of each run and the door's share of PostgreSQL's.
//
//   npm run build && VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/sql-door.mjs
//
// It creates (and drops at the end) the schema sql_door_bench in that database and the database role
// vdb_door_bench_v1_reader the service syncs. Options (env): BENCH_DURATION (s, 10), BENCH_WARMUP (s, 2),
// BENCH_CONNECTIONS (10), BENCH_ROUNDS (2, or `--rounds N`), BENCH_POOL (the service's pool size, 10),
// BENCH_DOOR_NODE_ARGS (node options of the service's process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
// Each door run also reports the CPU the service's process used per query (/proc/<pid>/stat, user and system).
// `--named`: the clients prepare the lookup (node-postgres's `name`) on both sides instead of sending it
// unnamed each time, so PostgreSQL reached directly also skips parsing and planning it.
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { lookupLoad } from './pg-lookup-load.mjs';
import { processCpu } from './process-cpu.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TOKEN = 'bench-reader-token-0123456789';
const ROWS = 10_000;
const SQL = 'select id, name, region from sql_door_bench.customers where id = $1';
const number = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const settings = {
  duration: number('BENCH_DURATION', 10),
  warmup: number('BENCH_WARMUP', 2),
  connections: number('BENCH_CONNECTIONS', 10),
  rounds: process.argv.includes('--rounds') ? Number(process.argv[process.argv.indexOf('--rounds') + 1]) : number('BENCH_ROUNDS', 2),
  pool: number('BENCH_POOL', 10),
  named: process.argv.includes('--named'),
};

if (process.argv[2] === '--serve') await serve(process.argv[3]);
else await main();

/** The child: the service with the SQL front door on a free port; tells the parent the port. */
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

async function main() {
  const url = process.env.VDB_TEST_POSTGRES_URL;
  if (!url) {
    console.error('set VDB_TEST_POSTGRES_URL: the door is compared with PostgreSQL itself');
    process.exit(1);
  }
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('drop schema if exists sql_door_bench cascade');
  await admin.query('create schema sql_door_bench');
  await admin.query('create table sql_door_bench.customers (id integer primary key, name text not null, region text not null)');
  await admin.query(`insert into sql_door_bench.customers select n, 'customer ' || n, (array['North', 'South', 'East', 'West'])[1 + n % 4] from generate_series(1, ${ROWS}) as n`);

  const folder = mkdtempSync(join(tmpdir(), 'vdb-bench-sql-'));
  mkdirSync(join(folder, 'bundle', 'vdbs'), { recursive: true });
  writeFileSync(join(folder, 'bundle', 'vdbs', 'door_bench.yaml'), [
    'name: door_bench', 'version: "1"', 'datasource: bench_db', 'schemas:', '  - { name: sql_door_bench }',
    'dataRoles:', '  - name: reader', '    grants: [{ resource: sql_door_bench.customers, allow: [select] }]', '',
  ].join('\n'));
  const configFile = join(folder, 'service.yaml');
  writeFileSync(configFile, JSON.stringify({
    server: { host: '127.0.0.1', port: 0 },
    descriptors: './bundle',
    datasources: { bench_db: { adapter: 'postgres', connection: { connectionString: url }, pool: { max: settings.pool } } },
    auth: { scheme: 'bearer', tokens: [{ token: TOKEN, subject: 'bench', roles: ['reader'] }] },
    runtime: { enabled: false },
    logging: { level: 'warn' },
    sql: { enabled: true, host: '127.0.0.1', port: 0 },
  }));
  const execArgv = (process.env.BENCH_DOOR_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const child = fork(fileURLToPath(import.meta.url), ['--serve', configFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  const { port } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the service stopped (exit ${code})`)));
  });

  const direct = () => ({ connectionString: url });
  const door = () => ({ host: '127.0.0.1', port, database: 'door_bench@1', user: 'bench', password: TOKEN });
  // the first connection starts the catalog mirrors' snapshot (initdb in a worker thread: seconds of CPU,
  // docs/sql-catalog.md); a catalog statement waits for it, so that no timed round measures it
  const first = new pg.Client(door());
  await first.connect();
  await first.query('select current_database()');
  await first.end();
  const results = { direct: [], door: [] };
  try {
    for (let round = 0; round < settings.rounds; round++) {
      for (const [name, config] of [['direct', direct], ['door', door]]) {
        await load(config, settings.warmup);
        const before = processCpu(child.pid);
        const { qps, count } = await load(config, settings.duration);
        const after = processCpu(child.pid);
        results[name].push(qps);
        const cpu = name === 'door'
          ? `, the door's process ${perQuery(after.user - before.user + after.system - before.system, count)} µs CPU per query`
            + ` (user ${perQuery(after.user - before.user, count)}, system ${perQuery(after.system - before.system, count)})`
          : '';
        console.log(`round ${round + 1} ${name.padEnd(6)} ${qps.toFixed(0)} queries/s${cpu}`);
      }
    }
  } finally {
    child.send('stop');
    await new Promise((resolve) => child.once('exit', resolve));
    await admin.query('drop schema if exists sql_door_bench cascade');
    const role = await admin.query("select 1 from pg_catalog.pg_roles where rolname = 'vdb_door_bench_v1_reader'");
    if (role.rowCount > 0) {
      await admin.query('drop owned by vdb_door_bench_v1_reader');
      await admin.query('drop role vdb_door_bench_v1_reader');
    }
    await admin.end();
  }
  const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
  console.log(`PostgreSQL ${mean(results.direct).toFixed(0)} queries/s, the door ${mean(results.door).toFixed(0)} queries/s: `
    + `${(mean(results.door) / mean(results.direct)).toFixed(2)}× (${settings.connections} connections, ${settings.rounds} rounds of ${settings.duration} s`
    + `${settings.named ? ', the clients\' statement prepared' : ', the clients\' statement unnamed'})`);
}

/** The lookup of this benchmark by `settings.connections` clients for `seconds`. */
function load(config, seconds) {
  return lookupLoad(config, { sql: SQL, rows: ROWS, connections: settings.connections, seconds, named: settings.named });
}

function perQuery(micros, count) {
  return (micros / count).toFixed(1);
}
