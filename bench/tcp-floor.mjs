// The floor under the SQL front door's CPU per query: a Node.js process that only forwards bytes between
// node-postgres clients and PostgreSQL (two sockets per connection, no parsing), under the lookup load of
// bench/sql-door.mjs (10 clients, a one-row lookup by primary key, the extended protocol). Any door written
// in Node.js pays at least this proxy's CPU per query; bench/README.md compares the door with it.
//
//   VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/tcp-floor.mjs
//
// Creates (and drops at the end) the table tcp_floor_bench in that database. Options (env): BENCH_DURATION
// (s, 10), BENCH_WARMUP (s, 3), BENCH_CONNECTIONS (10).
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { lookupLoad } from './pg-lookup-load.mjs';
import { processCpu } from './process-cpu.mjs';

const SQL = 'select id, name, region from tcp_floor_bench where id = $1';
const ROWS = 10_000;
const number = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const settings = { duration: number('BENCH_DURATION', 10), warmup: number('BENCH_WARMUP', 3), connections: number('BENCH_CONNECTIONS', 10) };

if (process.argv[2] === '--proxy') proxy(new URL(process.argv[3]));
else await main();

/** The child: forwards each connection to PostgreSQL byte for byte, with TCP_NODELAY as the door sets it. */
function proxy(target) {
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
}

async function main() {
  const url = process.env.VDB_TEST_POSTGRES_URL;
  if (!url) {
    console.error('set VDB_TEST_POSTGRES_URL');
    process.exit(1);
  }
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('drop table if exists tcp_floor_bench');
  await admin.query('create table tcp_floor_bench (id integer primary key, name text not null, region text not null)');
  await admin.query(`insert into tcp_floor_bench select n, 'customer ' || n, 'North' from generate_series(1, ${ROWS}) as n`);
  const child = fork(fileURLToPath(import.meta.url), ['--proxy', url]);
  const port = await new Promise((resolve) => child.once('message', resolve));
  const parsed = new URL(url);
  const through = () => ({ host: '127.0.0.1', port, database: parsed.pathname.slice(1), user: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) });
  try {
    await load(() => ({ connectionString: url }), settings.warmup);
    const direct = await load(() => ({ connectionString: url }), settings.duration);
    await load(through, settings.warmup);
    const before = cpuOf(child.pid);
    const proxied = await load(through, settings.duration);
    const used = cpuOf(child.pid) - before;
    console.log(`PostgreSQL ${direct.qps.toFixed(0)} queries/s, through the proxy ${proxied.qps.toFixed(0)} queries/s `
      + `(${(proxied.qps / direct.qps).toFixed(2)}×), the proxy's process ${(used / proxied.count).toFixed(1)} µs CPU per query`);
  } finally {
    child.kill();
    await admin.query('drop table if exists tcp_floor_bench');
    await admin.end();
  }
}

/** The lookup of this benchmark by `settings.connections` clients for `seconds`. */
function load(config, seconds) {
  return lookupLoad(config, { sql: SQL, rows: ROWS, connections: settings.connections, seconds });
}

/** CPU time (user + system) of a process so far, in µs. */
function cpuOf(pid) {
  const { user, system } = processCpu(pid);
  return user + system;
}
