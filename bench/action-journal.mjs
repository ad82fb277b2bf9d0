// The throughput of an action with the journal of action runs (docs/actions.md) against the same action on a
// build without it: `POST /api/v1/actions/run/bench_order`, two inserts with rollbacks, on one datasource.
//
// The service of the build at ROOT (this checkout, or BENCH_ROOT: another build, e.g. of the commit before
// the journal) runs in a child process (`dist/core/cli.js start`); this process drives it with CONNECTIONS
// clients, each posting the action one request after another for DURATION seconds after a warm-up, and
// reports requests per second. Every answer must be 200.
//
//   npm run build && VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/action-journal.mjs
//   BENCH_ROOT=/tmp/before node bench/action-journal.mjs      # the same on another build
//
// Backend: PostgreSQL when VDB_TEST_POSTGRES_URL is set (schema `bench_actions`, dropped and created), an
// in-memory PGlite otherwise. Options (env): BENCH_DURATION (10), BENCH_WARMUP (2), BENCH_CONNECTIONS (10).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = process.env.BENCH_ROOT ?? fileURLToPath(new URL('../', import.meta.url));
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TOKEN = 'bench-action-token-0123456789';
const URL_PG = process.env.VDB_TEST_POSTGRES_URL;
const TABLES = [
  'create schema bench_actions',
  'create table bench_actions.orders (id text primary key, customer integer not null)',
  'create table bench_actions.audit (order_id text primary key, note text not null)',
];

const dir = mkdtempSync(join(tmpdir(), 'vdb-bench-actions-'));
mkdirSync(join(dir, 'bundle', 'vdbs'), { recursive: true });
mkdirSync(join(dir, 'bundle', 'actions'), { recursive: true });
if (URL_PG) {
  const client = new pg.Client({ connectionString: URL_PG });
  await client.connect();
  await client.query('drop schema if exists bench_actions cascade');
  for (const statement of TABLES) await client.query(statement);
  await client.end();
} else {
  writeFileSync(join(dir, 'bundle', 'seed.sql'), `${TABLES.join(';\n')};\n`);
}
const datasource = URL_PG
  ? `{ adapter: postgres, connection: { connectionString: "${URL_PG}" }, pool: { max: 10 } }`
  : '{ adapter: pglite, init: [seed.sql] }';
writeFileSync(join(dir, 'service.yaml'), `instanceId: bench-1
server: { host: 127.0.0.1, port: 0 }
descriptors: ./bundle
datasources: { db: ${datasource} }
auth: { scheme: bearer, adminRoles: [admin], tokens: [{ token: ${TOKEN}, subject: bench, roles: [admin, clerk] }] }
logging: { level: warn }
runtime: { enabled: false }
`);
writeFileSync(join(dir, 'bundle', 'vdbs', 'bench.yaml'), `name: bench
version: "1"
datasource: db
schemas: [{ name: bench_actions }]
dataRoles:
  - name: clerk
    grants: [{ resource: bench_actions, allow: [select, insert, delete] }]
`);
writeFileSync(join(dir, 'bundle', 'actions', 'bench_order.yaml'), `{% set id = uuid() %}
---
virtualDatabase: bench
needed:
  fields: [customer]
operations:
  - name: order
    type: insert
    entity: bench_actions.orders
    valueAssignments:
      - { field: id, value: {{ id }}, dataType: string }
      - { field: customer, value: {{ customer }}, dataType: integer }
    rollback:
      type: delete
      filters: [{ field: id, operation: EQUAL, value: {{ id }} }]
  - name: audit
    type: insert
    entity: bench_actions.audit
    valueAssignments:
      - { field: order_id, value: {{ id }}, dataType: string }
      - { field: note, value: placed }
    rollback:
      type: delete
      filters: [{ field: order_id, operation: EQUAL, value: {{ id }} }]
`);

const child = spawn(process.execPath, [join(ROOT, 'dist/core/cli.js'), 'start', '--config', join(dir, 'service.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
const url = await new Promise((resolve, reject) => {
  const read = (chunk) => {
    output += chunk.toString();
    const found = /listening on (http:\/\/\S+) \(/.exec(output)?.[1];
    if (found) resolve(found);
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  child.on('exit', () => reject(new Error(`the service ended:\n${output}`)));
});

const post = async () => {
  const response = await fetch(`${url}/api/v1/actions/run/bench_order`, {
    method: 'POST', body: '{"customer": 7}', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`answered ${response.status}`);
};
const drive = async (seconds) => {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < end) {
      await post();
      done += 1;
    }
  }));
  return done;
};
try {
  await drive(WARMUP);
  const started = performance.now();
  const done = await drive(DURATION);
  const seconds = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ root: ROOT, backend: URL_PG ? 'postgres' : 'pglite', connections: CONNECTIONS, requests: done, seconds: Number(seconds.toFixed(1)), perSecond: Number((done / seconds).toFixed(1)) }));
} finally {
  child.kill('SIGTERM');
}
