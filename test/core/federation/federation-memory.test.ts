// test-lane: postgres-server, mysql-server, soak
/**
 * The memory of a federated plan stays within `federation.memoryLimit` above the service's baseline
 * (docs/federation.md#memory): the service as its own process, its peak RSS (VmHWM, reset before each
 * statement) read from /proc. The bound asserted is the limit itself: the engine has three quarters of it,
 * the rows on their way to it an eighth (counted by their values' bytes), and a JavaScript row takes up to
 * about twice its values, the last eighth. From its start, the process is held to the same bound: nothing
 * else may take more, such as V8 optimizing the SQL parser's WebAssembly (core/wasm-tiers.ts). Each rise is
 * printed, on whichever Node runs the suite (the service is spawned with the test's own Node).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { releaseDatasource } from '../../support/synced-roles.js';
import { spawnService, type SpawnedService } from '../../support/spawned-service.js';
import { ANALYST_TOKEN, demoConfig } from '../../support/test-service.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;
const mysql = BACKENDS.find((backend) => backend.name === 'mysql') as Backend;

const MEMORY_LIMIT_BYTES = 64 * 2 ** 20;
/** Rows of 512 characters: 20 MiB through PostgreSQL's cursor (within the engine's share), 150 MiB from MariaDB in one read. */
const PAD = 512;
const PG_ROWS = 40_000;
const MY_ROWS = 300_000;

const PG_SETUP = [
  'drop schema if exists fedmem cascade',
  'create schema fedmem',
  `create view fedmem.wide as select i as id, repeat(md5(i::text), ${PAD / 32}) as pad from generate_series(1, ${PG_ROWS}) as i`,
  'create table fedmem.tags (id int primary key, tag text)',
  `insert into fedmem.tags select i, 'tag ' || i from generate_series(0, 9) as i`,
];
const PG_TEARDOWN = ['drop schema if exists fedmem cascade'];
const MY_SETUP = [
  'drop view if exists fedmem_wide',
  `create view fedmem_wide as select cast(seq as signed) as id, repeat(md5(seq), ${PAD / 32}) as pad from seq_1_to_${MY_ROWS}`,
];
const MY_TEARDOWN = ['drop view if exists fedmem_wide'];

function files(database: string): Record<string, string> {
  const query = (name: string, sql: string) => [`bundle/queries/${name}.yaml`, `---\ntype: sqlDirect\nvirtualDatabase: fedmem\nquery: >-\n  ${sql}\n`];
  return Object.fromEntries([
    ['bundle/vdbs/fedmem.yaml', `name: fedmem
version: "1"
datasource: pg_db
schemas:
  - { name: fedmem, datasource: pg_db }
  - { name: ${database}, datasource: my_db, include: [fedmem_wide] }
dataRoles:
  - name: analyst
    grants: [{ resource: fedmem, allow: [select] }, { resource: ${database}.fedmem_wide, allow: [select] }]
`],
    query('fedmem_warm', `select t.tag, m.id from fedmem.tags t join ${database}.fedmem_wide m on m.id = t.id where t.id = 1`),
    query('fedmem_pg', 'select count(*) as n, sum(length(w.pad)) as chars, count(distinct t.tag) as tags from fedmem.wide w join fedmem.tags t on t.id = w.id % 10'),
    query('fedmem_my', `select count(*) as n, sum(length(m.pad)) as chars from ${database}.fedmem_wide m join fedmem.tags t on t.id = m.id % 10`),
  ]);
}

/** VmRSS and VmHWM of a process, in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** Resets the process's peak RSS to its current RSS (proc(5): clear_refs 5). */
function resetPeak(pid: number): number {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return memoryOf(pid).rss;
}

/** MiB, for the lines the suite prints. */
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

const test = suite<{ pg: Datasource; my: Datasource; service: SpawnedService; started: number }>('federation: the memory of a plan within federation.memoryLimit');

if (!skippedHere(test, postgres) && !skippedHere(test, mysql)) {
  test.before(async (context) => {
    context.pg = await postgres.open('pg_db');
    context.my = await mysql.open('my_db');
    for (const statement of PG_SETUP) await context.pg.query(statement, []);
    for (const statement of MY_SETUP) await context.my.query(statement, []);
    const config = {
      ...demoConfig({ descriptors: './bundle' }),
      datasources: { pg_db: postgres.datasourceConfig, my_db: mysql.datasourceConfig },
      server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 300_000 },
      logging: { level: 'warn' },
      // no SQL door: its catalog mirror makes a PGlite snapshot in the background (a peak near 700 MB)
      sql: { enabled: false },
      federation: { memoryLimit: `${MEMORY_LIMIT_BYTES / 2 ** 20}MiB` },
    };
    context.service = await spawnService(config, files(mysql.database));
    context.started = memoryOf(context.service.pid).rss;
  });

  test.after(async ({ pg, my, service }) => {
    await service?.stop();
    await releaseDatasource(undefined, pg, PG_TEARDOWN, ['vdb_fedmem_v1_analyst']);
    await releaseDatasource(undefined, my, MY_TEARDOWN, ['vdb_fedmem_v1_analyst']);
  });

  const perform = async (service: SpawnedService, name: string) => {
    const response = await fetch(`${service.url}/api/v1/query/perform/${name}`, {
      method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: `Bearer ${ANALYST_TOKEN}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  /** A statement's answer and how far the process's RSS rose above where it stood before it. */
  const measured = async (service: SpawnedService, name: string) => {
    // the baseline: the service once a plan has run (the engine, the parser, each datasource's pool in place)
    const warm = await perform(service, 'fedmem_warm');
    assert.is(warm.status, 200, JSON.stringify(warm.body));
    const baseline = resetPeak(service.pid);
    const reply = await perform(service, name);
    const rise = memoryOf(service.pid).peak - baseline;
    console.log(`  ${name} on Node ${process.versions.node}: the peak RSS rose ${mib(rise)} above the baseline (${mib(baseline)})`);
    return { reply, rise };
  };

  test('from its start through its first plans the process stays within the limit above its RSS once started: V8 does not optimize the SQL parser\'s WebAssembly (hundreds of MiB on Node 24)', async ({ service, started }) => {
    // enough statements for the parser to be hot: V8 optimizes a WebAssembly function once it has run a while
    for (let run = 0; run < 20; run++) {
      const warm = await perform(service, 'fedmem_warm');
      assert.is(warm.status, 200, JSON.stringify(warm.body));
    }
    const rise = memoryOf(service.pid).peak - started;
    console.log(`  startup and 20 plans on Node ${process.versions.node}: the peak RSS rose ${mib(rise)} above the RSS once started (${mib(started)})`);
    assert.ok(rise <= MEMORY_LIMIT_BYTES, `the peak RSS rose ${mib(rise)} above the RSS once started (limit ${MEMORY_LIMIT_BYTES / 2 ** 20} MiB)`);
  });

  test('20 MiB of rows through a PostgreSQL cursor: answered, the process within the limit above its baseline', async ({ service }) => {
    const { reply, rise } = await measured(service, 'fedmem_pg');
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body['rows'], [{ n: String(PG_ROWS), chars: String(PG_ROWS * PAD), tags: '10' }]);
    assert.ok(rise <= MEMORY_LIMIT_BYTES, `the peak RSS rose ${mib(rise)} above the baseline (limit ${MEMORY_LIMIT_BYTES / 2 ** 20} MiB)`);
  });

  test('150 MiB of rows from MariaDB, which has no cursor: 422 result_too_large naming the datasource, the process within the limit', async ({ service }) => {
    const { reply, rise } = await measured(service, 'fedmem_my');
    assert.equal([reply.status, reply.body['code']], [422, 'result_too_large'], JSON.stringify(reply.body));
    assert.equal(reply.body['details'], { datasource: 'my_db', memoryLimit: '64MiB' });
    assert.ok(rise <= MEMORY_LIMIT_BYTES, `the peak RSS rose ${mib(rise)} above the baseline (limit ${MEMORY_LIMIT_BYTES / 2 ** 20} MiB)`);
    // the service is still there, and answers the next plan
    assert.is((await perform(service, 'fedmem_pg')).status, 200);
  });
}

test.run();
