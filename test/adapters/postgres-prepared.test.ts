import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresDialect } from '../../adapters/postgres/postgres-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];
const prepared = suite<{ db: Datasource }>('postgres: statements with values run prepared, and survive DDL');

if (url === undefined) {
  prepared.skip('(VDB_TEST_POSTGRES_URL is not set)', () => undefined);
} else {
  prepared.before(async (context) => {
    context.db = await new PostgresDialect('postgres').open({
      name: 'prepared_pg', adapter: 'postgres', connection: { connectionString: url }, pool: { max: 1 }, init: [], baseDir: process.cwd(),
    });
    await context.db.query('drop table if exists prepared_probe', []);
    await context.db.query('create table prepared_probe (id integer primary key, label integer)', []);
    await context.db.query('insert into prepared_probe values (1, 7)', []);
  });
  prepared.after(async ({ db }) => {
    await db?.query('drop table if exists prepared_probe', []);
    await db?.close();
  });

  prepared('a result type changed by DDL after the statement was prepared: the query still answers', async ({ db }) => {
    const sql = 'select label from prepared_probe where id = ?';
    assert.equal((await db.query(sql, [1])).rows, [{ label: 7 }]);
    await db.query('alter table prepared_probe alter column label type text', []);
    assert.equal((await db.query(sql, [1])).rows, [{ label: '7' }]);
    assert.equal((await db.query(sql, [1])).rows, [{ label: '7' }]);
  });
}

prepared.run();
