import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mysqlCodec, mysqlLogicalType } from '../../adapters/mysql/mysql-types.js';

test('mysql native types map like the other dialects', () => {
  const cases: [string, string][] = [
    ['varchar(120)', 'string'], ['longtext', 'string'], ["enum('a','b')", 'string'], ['int(11)', 'integer'],
    ['int(10) unsigned', 'integer'], ['smallint(6)', 'integer'], ['tinyint(4)', 'integer'], ['tinyint(1)', 'boolean'],
    ['bigint(20) unsigned', 'bigint'], ['decimal(10,2)', 'decimal'], ['double', 'float'], ['float', 'float'],
    ['bit(1)', 'boolean'], ['bit(8)', 'binary'], ['date', 'date'], ['time(3)', 'time'], ['datetime(6)', 'timestamp'],
    ['timestamp', 'timestamp'], ['json', 'json'], ['uuid', 'uuid'], ['varbinary(16)', 'binary'], ['longblob', 'binary'],
    ['year(4)', 'integer'],
  ];
  for (const [native, logical] of cases) assert.is(mysqlLogicalType(native), logical, native);
});

test('mysql result columns map by protocol type, charset and MariaDB metadata', () => {
  assert.equal(mysqlCodec({ name: 'b', columnType: 1, columnLength: 1 }), { logicalType: 'boolean' });
  assert.equal(mysqlCodec({ name: 'n', columnType: 1, columnLength: 4 }), { logicalType: 'integer' });
  assert.equal(mysqlCodec({ name: 'ts', columnType: 7 }), { logicalType: 'timestamp', withTimeZone: true });
  assert.equal(mysqlCodec({ name: 'dt', columnType: 12 }), { logicalType: 'timestamp' });
  assert.equal(mysqlCodec({ name: 'j', columnType: 252, characterSet: 224, extendedFormat: 'json' }), { logicalType: 'json' });
  assert.equal(mysqlCodec({ name: 'u', columnType: 254, extendedTypeName: 'uuid' }), { logicalType: 'uuid' });
  assert.equal(mysqlCodec({ name: 'blob', columnType: 252, characterSet: 63 }), { logicalType: 'binary' });
  assert.equal(mysqlCodec({ name: 'text', columnType: 252, characterSet: 224 }), { logicalType: 'string' });
});

test.run();
