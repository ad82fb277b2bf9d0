import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OracleDialect } from '../../adapters/oracle/oracle-dialect.js';
import { oracleIntrospectionQueries } from '../../adapters/oracle/oracle-introspector.js';
import { oracleCodec, oracleLogicalType } from '../../adapters/oracle/oracle-types.js';
import { UnavailableError } from '../../core/plugin-api/errors.js';
import { encodeValue } from '../../core/sql/value-encoding.js';
import { HOSTILE_SCHEMAS, assertIntrospectionQueries } from './introspection-checks.js';

// No Oracle server runs here: the adapter is checked through the SQL it compiles, its type mapping, the
// text forms its session settings produce, and a connection attempt that must fail cleanly.
const client = knex({ client: 'oracledb' });

test('knex compiles builder SQL for oracle with numbered bindings, without a connection', () => {
  const insert = client('SALES.ORDERS').insert({ ID: 7, NOTE: "it's" }).toSQL().toNative();
  assert.is(insert.sql, 'insert into "SALES"."ORDERS" ("ID", "NOTE") values (:1, :2)');
  assert.equal(insert.bindings, [7, "it's"]);
  const update = client('SALES.ORDERS').update({ NOTE: 'x' }).where({ ID: 7 }).toSQL().toNative();
  assert.is(update.sql, 'update "SALES"."ORDERS" set "NOTE" = :1 where "ID" = :2');
  assert.equal(update.bindings, ['x', 7]);
  const remove = client('SALES.ORDERS').where('ID', '>', 3).del().toSQL().toNative();
  assert.is(remove.sql, 'delete from "SALES"."ORDERS" where "ID" > :1');
  assert.equal(remove.bindings, [3]);
  const select = client('SALES.ORDERS').select('ID').where({ STATUS: 'open' }).toSQL().toNative();
  assert.is(select.sql, 'select "ID" from "SALES"."ORDERS" where "STATUS" = :1');
  assert.equal(select.bindings, ['open']);
  // Booleans bind as 1/0: Oracle before 23ai has no boolean in SQL.
  const raw = client.raw('select * from t where id = ? and flag = ?', [1, true]).toSQL().toNative();
  assert.equal([raw.sql, raw.bindings], ['select * from t where id = :1 and flag = :2', [1, 1]]);
});

test('oracle introspection reads the ALL_* dictionary views and binds the owner names', () => {
  assertIntrospectionQueries(client, oracleIntrospectionQueries(HOSTILE_SCHEMAS), /:\d+/, {
    relations: ['ALL_TABLES', 'ALL_VIEWS'],
    columns: ['ALL_TAB_COLUMNS'],
    keys: ['ALL_CONSTRAINTS', 'ALL_CONS_COLUMNS', 'ALL_INDEXES', 'ALL_IND_COLUMNS'],
    foreignKeys: ['ALL_CONSTRAINTS', 'ALL_CONS_COLUMNS', 'R_CONSTRAINT_NAME'],
    functions: ['ALL_PROCEDURES', 'ALL_ARGUMENTS'],
  });
});

test('oracle native types map like the other dialects, NUMBER by precision and scale', () => {
  const cases: [string, string][] = [
    ['VARCHAR2(100)', 'string'], ['NVARCHAR2(10)', 'string'], ['CHAR(1)', 'string'], ['CLOB', 'string'],
    ['NUMBER(9,0)', 'integer'], ['NUMBER(5)', 'integer'], ['NUMBER(10,0)', 'bigint'], ['NUMBER(*,0)', 'bigint'],
    ['NUMBER(18,2)', 'decimal'], ['NUMBER', 'decimal'], ['FLOAT(126)', 'float'], ['BINARY_DOUBLE', 'float'],
    ['BINARY_FLOAT', 'float'], ['DATE', 'timestamp'], ['TIMESTAMP(6)', 'timestamp'],
    ['TIMESTAMP(6) WITH TIME ZONE', 'timestamp'], ['TIMESTAMP(6) WITH LOCAL TIME ZONE', 'timestamp'],
    ['JSON', 'json'], ['BOOLEAN', 'boolean'], ['RAW(16)', 'binary'], ['BLOB', 'binary'],
    ['INTERVAL DAY(2) TO SECOND(6)', 'string'],
  ];
  for (const [native, logical] of cases) assert.is(oracleLogicalType(native), logical, native);
});

test('oracledb result columns map NUMBER by precision and scale; zoned timestamps are instants', () => {
  assert.equal(oracleCodec({ name: 'N', dbTypeName: 'NUMBER', precision: 9, scale: 0 }), { logicalType: 'integer' });
  assert.equal(oracleCodec({ name: 'N', dbTypeName: 'NUMBER', precision: 19, scale: 0 }), { logicalType: 'bigint' });
  assert.equal(oracleCodec({ name: 'N', dbTypeName: 'NUMBER', precision: 0, scale: -127 }), { logicalType: 'decimal' });
  assert.equal(oracleCodec({ name: 'N', dbTypeName: 'NUMBER', precision: 126, scale: -127 }), { logicalType: 'float' });
  assert.equal(oracleCodec({ name: 'N', dbTypeName: 'NUMBER', precision: 12, scale: 2 }), { logicalType: 'decimal' });
  assert.equal(oracleCodec({ name: 'T', dbTypeName: 'TIMESTAMP WITH TIME ZONE' }), { logicalType: 'timestamp', withTimeZone: true });
  assert.equal(oracleCodec({ name: 'T', dbTypeName: 'TIMESTAMP WITH LOCAL TIME ZONE' }), { logicalType: 'timestamp', withTimeZone: true });
  assert.equal(oracleCodec({ name: 'D', dbTypeName: 'DATE' }), { logicalType: 'timestamp', withTimeZone: false });
});

test('the text forms of the oracle session settings encode like every adapter', () => {
  assert.is(encodeValue('2024-01-31 10:11:12', { logicalType: 'timestamp' }), '2024-01-31T10:11:12');
  assert.is(encodeValue('2024-01-31 10:11:12.123000000', { logicalType: 'timestamp' }), '2024-01-31T10:11:12.123');
  assert.is(encodeValue('2024-01-31 11:11:12.123000000 +01:00', { logicalType: 'timestamp', withTimeZone: true }), '2024-01-31T10:11:12.123Z');
  assert.is(encodeValue('12345678901234.5', { logicalType: 'decimal' }), '12345678901234.5');
  assert.is(encodeValue('.5', { logicalType: 'decimal' }), '0.5');
  assert.is(encodeValue('42', { logicalType: 'integer' }), 42);
});

test('an unreachable Oracle listener fails with datasource_unavailable, without the password', async () => {
  const error = await new OracleDialect('oracle').open({
    name: 'unreachable', adapter: 'oracle', pool: {}, init: [], baseDir: process.cwd(),
    connection: { host: '127.0.0.1', port: 1, serviceName: 'FREEPDB1', user: 'app', password: 'ora-secret-pw' },
  }).then(() => undefined, (e: unknown) => e);
  assert.instance(error, UnavailableError);
  assert.is((error as UnavailableError).code, 'datasource_unavailable');
  assert.match((error as Error).message, /datasource "unreachable"/);
  assert.not.match((error as Error).message, 'ora-secret-pw');
});

test.run();
