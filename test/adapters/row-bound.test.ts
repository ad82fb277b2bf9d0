import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresDialect } from '../../adapters/postgres/postgres-dialect.js';
import { statementFailure } from '../../core/sql/statement-failure.js';
import type { Datasource, DatasourceSettings } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';
import { sharedPglite } from '../support/shared-pglite.js';
import { startTestService } from '../support/test-service.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];
/** The default `server.maxResultBytes`, which query endpoints also bound each row with. */
const MAX_ROW_BYTES = 16 * 1024 * 1024;

/**
 * A caller's query whose row is larger than the service returns is refused by the server before it sends the
 * row: the driver never holds the value. Without the bound, pg's protocol parser throws on a value over V8's
 * string limit (~512 MiB) inside the socket handler, where no request handler catches it, and the process ends.
 */
async function expectRefused(datasource: Datasource, valueBytes: number): Promise<void> {
  const sql = `select repeat('x', ${valueBytes}) as v`;
  const bounded = datasource.dialect.boundRowBytes(sql);
  assert.type(bounded, 'string', 'the PostgreSQL family bounds rows on the server');
  const error = await datasource.query(bounded as string, [MAX_ROW_BYTES]).then(() => undefined, (failure: unknown) => failure);
  assert.is(statementFailure(error).kind, 'row_too_large', `refused with the mark: ${String(error)}`);
  const next = await datasource.query(datasource.dialect.boundRowBytes("select 'y' as v;  -- a trailing comment") as string, [MAX_ROW_BYTES]);
  assert.equal(next.rows, [{ v: 'y' }], 'a row under the bound comes back, a trailing semicolon and comment kept harmless');
}

const pglite = suite('pglite: rows over the service bound are refused by the database');

pglite('a 20 MB value is refused on the server, the datasource serves the next query', async () => {
  await expectRefused(await sharedPglite(), 20_000_000);
});

pglite('through the Task API: the observation fails with result_too_large and the service keeps answering', async () => {
  const service = await startTestService();
  try {
    const reply = await service.request('/api/v1/capabilities/answer/vdbs/retail/versions/1/tasks', {
      method: 'POST', body: JSON.stringify({ goal: "select repeat('x', 20000000) as v" }), headers: { 'content-type': 'application/json' },
    });
    const text = await reply.text();
    assert.is(reply.status, 200, text);
    assert.ok(!text.includes('x'.repeat(1000)), 'no part of the value came back');
    const snapshot = JSON.parse(text) as { state: string; artifacts: { kind: string; content: { data: string } }[] };
    const answer = snapshot.artifacts.find((artifact) => artifact.kind === 'answer');
    assert.is(snapshot.state, 'failed');
    assert.match(Buffer.from(answer?.content.data ?? '', 'base64').toString('utf8'), /\(failed, result_too_large\): a row of the result is larger than the task's observation budget of 2097152 bytes/);
    assert.is((await service.request('/observe/health', { token: null })).status, 200);
  } finally {
    await service.close();
  }
});

pglite.run();

const postgres = suite('postgres: a value over what the process can hold never reaches the driver');

// uvu reports a skipped test as skipped: the suite runs only where a server is set
(url === undefined ? postgres.skip : postgres)('a 600 MB value is refused on the server and the process stays up', async () => {
  const settings: DatasourceSettings = { name: 'row_bound', adapter: 'postgres', connection: { connectionString: url }, pool: { max: 2 }, init: [], baseDir: process.cwd() };
  const datasource = runtimeOver(await new PostgresDialect('postgres').open(settings));
  try {
    await expectRefused(datasource, 600_000_000);
  } finally {
    await datasource.close();
  }
});

postgres.run();
