import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MysqlDialect } from '../../adapters/mysql/mysql-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';

/**
 * Reading rows as they arrive and `KILL QUERY` on MariaDB (adapters/mysql/mysql-stream.ts), on a pool of one
 * connection: after a cut or an abort the statement no longer runs, and the same connection (same thread
 * id) serves the next statement, so it went back to its pool usable rather than being replaced.
 */
const url = process.env['VDB_TEST_MYSQL_URL'];
const MARK = 'stream_runaway';
const RUNAWAY = `with recursive r(n) as (select 1 union all select n + 1 from r where n < 1000) select a.n as ${MARK} from r a, r b, r c, r d`;
const COUNTING = `with recursive r(n) as (select 1 union all select n + 1 from r where n < 1000) select count(*) as ${MARK} from r a, r b, r c, r d`;

const test = suite<{ datasource: Datasource; thread: number }>('mysql: rows streamed, statements killed');
if (url === undefined) {
  test.skip('(VDB_TEST_MYSQL_URL is not set)', () => undefined);
} else {
  const threadOf = async (datasource: Datasource) => Number((await datasource.query('select connection_id() as id', [])).rows[0]?.['id']);
  const running = async (datasource: Datasource, thread: number) => {
    // asked on the pool's one connection itself: a statement of it still running would make this one wait
    const result = await datasource.query(`select count(*) as n from information_schema.processlist where command = 'Query' and id <> ? and info like ?`, [thread, `%${MARK}%`]);
    return Number(result.rows[0]?.['n']);
  };

  test.before(async (context) => {
    context.datasource = runtimeOver(await new MysqlDialect('mysql').open({
      name: 'stream_mysql', adapter: 'mysql', connection: { connectionString: url }, pool: { max: 1 }, init: [], baseDir: process.cwd(),
    }));
    context.thread = await threadOf(context.datasource);
  });
  test.after(async ({ datasource }) => datasource?.close());

  test('a result cut at maxRows keeps the rows within it; its statement is killed and the connection serves the next', async ({ datasource, thread }) => {
    const result = await datasource.query(RUNAWAY, [], { maxRows: 3 });
    assert.equal([result.rows.length, result.truncated, result.truncatedBy], [3, true, 'maxRows']);
    assert.ok(result.rows.every((row) => typeof row[MARK] === 'number'), JSON.stringify(result.rows));
    assert.is(await threadOf(datasource), thread, 'the same connection');
    assert.is(await running(datasource, thread), 0);
  });

  test('a result cut at maxBytes holds no more than the budget', async ({ datasource, thread }) => {
    const result = await datasource.query(RUNAWAY, [], { maxBytes: 100 });
    assert.is(result.truncatedBy, 'maxBytes');
    assert.ok(Buffer.byteLength(JSON.stringify(result.rows)) <= 100 && result.rows.length > 0, JSON.stringify(result.rows));
    assert.is(await threadOf(datasource), thread, 'the same connection');
  });

  test('an aborted statement is killed on the server and fails with 57014; the connection serves the next', async ({ datasource, thread }) => {
    const controller = new AbortController();
    const outcome = datasource.query(COUNTING, [], { signal: controller.signal }).then(() => 'answered', (error: unknown) => (error as { code?: unknown }).code);
    setTimeout(() => controller.abort(), 300);
    assert.is(await outcome, '57014');
    assert.is(await threadOf(datasource), thread, 'the same connection');
    assert.is(await running(datasource, thread), 0);
  });

  test('a statement without a result set counts the rows it changed', async ({ datasource }) => {
    const db = new URL(url).pathname.slice(1);
    await datasource.query(`create temporary table ${db}.stream_probe (id integer)`, []);
    const inserted = await datasource.query(`insert into ${db}.stream_probe (id) values (?), (?), (?)`, [1, 2, 3]);
    assert.equal([inserted.rowCount, inserted.columns], [3, []]);
    await datasource.query(`drop temporary table ${db}.stream_probe`, []);
  });
}
test.run();
