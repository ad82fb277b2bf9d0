import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresDialect } from '../../adapters/postgres/postgres-dialect.js';
import type { Datasource, WireStatement } from '../../core/plugin-api/sql-dialect.js';

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

  prepared('a prepared statement deallocated on the connection behind the datasource\'s back is parsed again, not failed', async ({ db }) => {
    const sql = 'select label from prepared_probe where id = ? and 2 > 1';
    const first = (await db.query(sql, [1])).rows;
    const kept = async () => (await db.query('select name from pg_prepared_statements where statement = ?', ['select label from prepared_probe where id = $1 and 2 > 1'])).rows.map((row) => String(row['name']));
    const [name] = await kept();
    assert.ok(name !== undefined, 'the statement was prepared');
    await db.query(`deallocate "${name as string}"`, []);
    assert.equal((await db.query(sql, [1])).rows, first);
    assert.equal(await kept(), [name]);
  });

  prepared('past 500 distinct texts, a new text is still prepared, and no connection holds more than 500 prepared statements', async ({ db }) => {
    for (let index = 0; index < 600; index++) await db.query(`select ?::int + ${index} as n`, [1]);
    const sql = 'select label from prepared_probe where id = ? and 3 > 2';
    const first = (await db.query(sql, [1])).rows;
    assert.equal((await db.query(sql, [1])).rows, first);
    const kept = await db.query('select count(*)::int as n from pg_prepared_statements where statement = ?', ['select label from prepared_probe where id = $1 and 3 > 2']);
    assert.equal(kept.rows, [{ n: 1 }], 'the 601st distinct text is prepared');
    const held = await db.query('select count(*)::int as n from pg_prepared_statements where name like ?', ['vdb\\_%']);
    assert.ok((held.rows[0]?.['n'] as number) <= 500, `the connection holds ${String(held.rows[0]?.['n'])} prepared statements`);
  });

  prepared('planEachRun: the statement is planned for each run\'s values, never kept prepared (no generic plan for arrays of any size)', async ({ db }) => {
    const sql = 'select count(*)::int as n from unnest(?::int[]) as shipped(id) join prepared_probe p on p.id = shipped.id';
    for (let run = 0; run < 7; run++) assert.equal((await db.query(sql, [[1, 2, 3]], { planEachRun: true })).rows, [{ n: 1 }]);
    const kept = async () => (await db.query('select count(*)::int as n from pg_prepared_statements where statement like ?', ['%unnest($1::int[]) as shipped(id)%'])).rows;
    assert.equal(await kept(), [{ n: 0 }], 'not prepared');
    await db.query(sql, [[1]]);
    assert.equal(await kept(), [{ n: 1 }], 'the same text without it is prepared');
  });

  prepared('a text of several statements answers its last one: the rows of a final SELECT, the count of a final UPDATE', async ({ db }) => {
    const rows = await db.query('update prepared_probe set id = id where id = 1; select id, id as again, null::text as nothing from prepared_probe', []);
    assert.equal([rows.rows, rows.rowCount, rows.columns.map((column) => column.name)], [[{ id: 1, again: 1, nothing: null }], 1, ['id', 'again', 'nothing']]);
    const counted = await db.query('select id from prepared_probe; update prepared_probe set id = id', []);
    assert.equal([counted.rows, counted.rowCount, counted.columns], [[], 1, []]);
  });

  prepared('values come back decoded by the connection\'s types, on the first run (described) and the next (not), a column named twice keeping its last value', async ({ db }) => {
    const sql = "select ?::int as n, 9007199254740993::int8 as big, 1.50::numeric as price, true as ok, '\\x0102'::bytea as bytes, '{\"a\":1}'::json as doc, array[1,2] as list, null::date as day, 1 as n2, 2 as n2";
    for (const run of [1, 2]) {
      const result = await db.query(sql, [3]);
      assert.equal(result.rows, [{ n: 3, big: '9007199254740993', price: '1.5', ok: true, bytes: 'AQI=', doc: { a: 1 }, list: [1, 2], day: null, n2: 2 }], `run ${run}`);
      assert.equal(result.columns.map((column) => column.logicalType), ['integer', 'bigint', 'decimal', 'boolean', 'binary', 'json', 'json', 'date', 'integer', 'integer'], `run ${run}`);
    }
  });

  /** A forwarded run of `statement` (as the SQL front door sends it): the type OIDs of its RowDescription and its DataRows' first values. */
  async function forwardedRun(db: Datasource, statement: WireStatement): Promise<{ types: number[]; values: string[] }> {
    const messages: Buffer[] = [];
    assert.is(await db.forwardWire!(statement, { maxBytes: 1_000_000, send: (message) => messages.push(Buffer.from(message)) }), 'done');
    const types: number[] = [];
    const values: string[] = [];
    for (const message of messages) {
      if (message[0] === 0x54) {
        // RowDescription: per field a name, then table OID (4), column (2), type OID (4), size (2), modifier (4), format (2)
        let at = 7;
        for (let field = 0; field < message.readInt16BE(5); field++) {
          at = message.indexOf(0, at) + 1;
          types.push(message.readUInt32BE(at + 6));
          at += 18;
        }
      }
      if (message[0] === 0x44) values.push(message.toString('utf8', 11, 11 + message.readInt32BE(7)));
    }
    return { types, values };
  }

  prepared('a forwarded statement with values is prepared once on its connection, then runs without Parse; after DDL it runs unnamed', async ({ db }) => {
    const text = 'select label from prepared_probe where id = $1 and label is not null';
    const statement: WireStatement = { text, parameterTypes: [], describe: 'portal', execute: true, parameters: [{ value: Buffer.from('1'), format: 0 }] };
    const before = await forwardedRun(db, statement);
    // a second Parse under the same name would be refused (42P05): this run binds the statement already there
    assert.equal(await forwardedRun(db, statement), before);
    const names = await db.query('select name from pg_prepared_statements where statement = ?', [text]);
    assert.is(names.rows.length, 1, 'one prepared statement on the pool\'s one connection');
    assert.match(String(names.rows[0]?.['name']), /^vdb_/);

    await db.query('alter table prepared_probe alter column label type varchar(10)', []);
    assert.equal(await forwardedRun(db, statement), { types: [1043], values: [before.values[0] as string] });
    assert.equal(await forwardedRun(db, statement), { types: [1043], values: [before.values[0] as string] });
  });

  prepared('a prepared name deallocated on the connection behind the datasource\'s back is parsed again, not failed', async ({ db }) => {
    const text = 'select id from prepared_probe where id = $1 and id > 0';
    const statement: WireStatement = { text, parameterTypes: [], describe: 'rows', parameters: [{ value: Buffer.from('1'), format: 0 }] };
    assert.equal((await forwardedRun(db, statement)).values, ['1']);
    const kept = async () => (await db.query('select name from pg_prepared_statements where statement = ?', [text])).rows.map((row) => String(row['name']));
    const [name] = await kept();
    await db.query(`deallocate "${name as string}"`, []);
    assert.equal(await kept(), []);
    assert.equal((await forwardedRun(db, statement)).values, ['1']);
    assert.equal(await kept(), [name]);
  });

  prepared('a forwarded statement without values runs unnamed: ad-hoc texts leave nothing on the server', async ({ db }) => {
    const text = 'select id from prepared_probe where id = 1 and 41 < 42';
    const { values } = await forwardedRun(db, { text, parameterTypes: [], describe: 'rows' });
    assert.equal(values, ['1']);
    assert.is((await db.query('select name from pg_prepared_statements where statement = ?', [text])).rows.length, 0);
  });
}

prepared.run();
