import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MssqlDialect } from '../../adapters/mssql/mssql-dialect.js';
import { mssqlIntrospectionQueries } from '../../adapters/mssql/mssql-introspector.js';
import { mssqlCodec, mssqlLogicalType } from '../../adapters/mssql/mssql-types.js';
import { UnavailableError } from '../../core/plugin-api/errors.js';
import { encodeValue } from '../../core/sql/value-encoding.js';
import { HOSTILE_SCHEMAS, assertIntrospectionQueries } from './introspection-checks.js';

// No SQL Server runs here: the adapter is checked through the SQL it compiles, its type mapping, and a
// connection attempt that must fail cleanly.
const client = knex({ client: 'mssql' });

test('knex compiles builder SQL for mssql with numbered bindings, without a connection', () => {
  const insert = client('sales.orders').insert({ id: 7, note: "it's" }).toSQL().toNative();
  assert.is(insert.sql, 'insert into [sales].[orders] ([id], [note]) values (@p0, @p1)');
  assert.equal(insert.bindings, [7, "it's"]);
  const update = client('sales.orders').update({ note: 'x' }).where({ id: 7 }).toSQL().toNative();
  assert.is(update.sql, 'update [sales].[orders] set [note] = @p0 where [id] = @p1;select @@rowcount');
  assert.equal(update.bindings, ['x', 7]);
  const remove = client('sales.orders').where('id', '>', 3).del().toSQL().toNative();
  assert.is(remove.sql, 'delete from [sales].[orders] where [id] > @p0;select @@rowcount');
  assert.equal(remove.bindings, [3]);
  const select = client('sales.orders').select('id').where({ status: 'open' }).limit(5).toSQL().toNative();
  assert.is(select.sql, 'select top (@p0) [id] from [sales].[orders] where [status] = @p1');
  assert.equal(select.bindings, [5, 'open']);
  const raw = client.raw('select * from t where id = ? and note = ?', [1, 'a']).toSQL().toNative();
  assert.equal([raw.sql, raw.bindings], ['select * from t where id = @p0 and note = @p1', [1, 'a']]);
});

test('mssql introspection reads sys.* and INFORMATION_SCHEMA and binds the schema names', () => {
  assertIntrospectionQueries(client, mssqlIntrospectionQueries(HOSTILE_SCHEMAS), /@p\d+/, {
    relations: ['sys.objects', 'sys.schemas'],
    columns: ['INFORMATION_SCHEMA.COLUMNS'],
    keys: ['sys.indexes', 'sys.index_columns', 'sys.columns'],
    foreignKeys: ['sys.foreign_keys', 'sys.foreign_key_columns'],
    functions: ['sys.objects', 'INFORMATION_SCHEMA.ROUTINES'],
  });
});

test('mssql native types map like the other dialects', () => {
  const cases: [string, string][] = [
    ['nvarchar(max)', 'string'], ['varchar(120)', 'string'], ['nchar(2)', 'string'], ['ntext', 'string'],
    ['xml', 'string'], ['int', 'integer'], ['smallint', 'integer'], ['tinyint', 'integer'], ['bigint', 'bigint'],
    ['decimal(18,2)', 'decimal'], ['numeric(10,0)', 'decimal'], ['money', 'decimal'], ['float', 'float'],
    ['real', 'float'], ['bit', 'boolean'], ['date', 'date'], ['time(7)', 'time'], ['datetime', 'timestamp'],
    ['datetime2(3)', 'timestamp'], ['smalldatetime', 'timestamp'], ['datetimeoffset(7)', 'timestamp'],
    ['uniqueidentifier', 'uuid'], ['varbinary(max)', 'binary'], ['image', 'binary'], ['timestamp', 'binary'],
    ['rowversion', 'binary'], ['json', 'json'], ['sql_variant', 'string'],
  ];
  for (const [native, logical] of cases) assert.is(mssqlLogicalType(native), logical, native);
});

test('tedious result columns map through their TDS type, nullable variants by size', () => {
  const codec = (name: string, dataLength?: number) => mssqlCodec({ colName: 'c', type: { name }, dataLength });
  assert.equal(codec('IntN', 8), { logicalType: 'bigint', withTimeZone: false });
  assert.equal(codec('IntN', 4), { logicalType: 'integer', withTimeZone: false });
  assert.equal(codec('FloatN', 4), { logicalType: 'float', withTimeZone: false });
  assert.equal(codec('BitN'), { logicalType: 'boolean', withTimeZone: false });
  assert.equal(codec('DateTimeOffset'), { logicalType: 'timestamp', withTimeZone: true });
  assert.equal(codec('DateTime2'), { logicalType: 'timestamp', withTimeZone: false });
  assert.equal(codec('UniqueIdentifier'), { logicalType: 'uuid', withTimeZone: false });
});

test('tedious values (useUTC dates, numeric decimals, upper-case GUIDs) encode like every adapter', () => {
  assert.is(encodeValue(new Date(Date.UTC(2024, 0, 31)), { logicalType: 'date' }), '2024-01-31');
  assert.is(encodeValue(new Date(Date.UTC(1970, 0, 1, 10, 11, 12, 500)), { logicalType: 'time' }), '10:11:12.5');
  assert.is(encodeValue(new Date(Date.UTC(2024, 0, 31, 10, 11, 12, 123)), { logicalType: 'timestamp' }), '2024-01-31T10:11:12.123');
  assert.is(encodeValue(new Date(Date.UTC(2024, 0, 31, 10, 11, 12, 123)), { logicalType: 'timestamp', withTimeZone: true }), '2024-01-31T10:11:12.123Z');
  assert.is(encodeValue(12.5, { logicalType: 'decimal' }), '12.5');
  assert.is(encodeValue('9007199254740993', { logicalType: 'bigint' }), '9007199254740993');
  assert.is(encodeValue('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', { logicalType: 'uuid' }), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
});

test('an unreachable SQL Server fails with datasource_unavailable, without the password', async () => {
  const error = await new MssqlDialect('mssql').open({
    name: 'unreachable', adapter: 'mssql', pool: {}, init: [], baseDir: process.cwd(),
    connection: { host: '127.0.0.1', port: 1, user: 'sa', password: 'ms-secret-pw', encrypt: false },
  }).then(() => undefined, (e: unknown) => e);
  assert.instance(error, UnavailableError);
  assert.is((error as UnavailableError).code, 'datasource_unavailable');
  assert.match((error as Error).message, /datasource "unreachable"/);
  assert.not.match((error as Error).message, 'ms-secret-pw');
});

test.run();
