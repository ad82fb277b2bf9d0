import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalDecimal, encodeValue } from '../../../core/sql/value-encoding.js';
import { encodeResult } from '../../../core/sql/result-builder.js';

test('decimals are plain strings without exponent or trailing zeros', () => {
  const cases: [string, string][] = [
    ['12.50', '12.5'], ['10.000', '10'], ['0.00', '0'], ['-0.0', '0'], ['.5', '0.5'], ['-.5', '-0.5'],
    ['007.10', '7.1'], ['1e21', '1000000000000000000000'], ['1.5E-7', '0.00000015'], ['-12.3400e2', '-1234'],
    ['+3', '3'], ['NaN', 'NaN'], ['123456789012345678901234567890.123456789', '123456789012345678901234567890.123456789'],
  ];
  for (const [input, expected] of cases) assert.is(canonicalDecimal(input), expected, input);
  assert.is(encodeValue(1e21, { logicalType: 'decimal' }), '1000000000000000000000');
  assert.is(encodeValue(0.1, { logicalType: 'decimal' }), '0.1');
});

test('numbers: integers as numbers (unsafe ones keep their text), bigints as strings, non-finite floats as strings', () => {
  assert.is(encodeValue('42', { logicalType: 'integer' }), 42);
  assert.is(encodeValue('99999999999999999999', { logicalType: 'integer' }), '99999999999999999999');
  assert.is(encodeValue(7n, { logicalType: 'bigint' }), '7');
  assert.is(encodeValue(7, { logicalType: 'bigint' }), '7');
  assert.is(encodeValue('1.25', { logicalType: 'float' }), 1.25);
  assert.is(encodeValue(Number.NaN, { logicalType: 'float' }), 'NaN');
  assert.is(encodeValue('-Infinity', { logicalType: 'float' }), '-Infinity');
  assert.is(encodeValue(Number.POSITIVE_INFINITY, { logicalType: 'float' }), 'Infinity');
});

test('booleans from every driver shape', () => {
  for (const value of [true, 1, 't', 'true', '1', Buffer.from([1])]) assert.is(encodeValue(value, { logicalType: 'boolean' }), true, String(value));
  for (const value of [false, 0, 'f', 'false', '0', Buffer.from([0])]) assert.is(encodeValue(value, { logicalType: 'boolean' }), false, String(value));
});

test('dates and times', () => {
  assert.is(encodeValue('2024-01-31', { logicalType: 'date' }), '2024-01-31');
  assert.is(encodeValue('infinity', { logicalType: 'date' }), 'infinity');
  assert.is(encodeValue('0044-03-15 BC', { logicalType: 'date' }), '0044-03-15 BC');
  assert.is(encodeValue('10:11:12', { logicalType: 'time' }), '10:11:12');
  assert.is(encodeValue('10:11:12.500000', { logicalType: 'time' }), '10:11:12.5');
  assert.is(encodeValue('10:11:12.000123', { logicalType: 'time' }), '10:11:12.000123');
  assert.is(encodeValue('838:59:59', { logicalType: 'time' }), '838:59:59');
});

test('timestamps without a zone stay wall-clock; zoned ones become UTC with Z, keeping microseconds', () => {
  const naive = { logicalType: 'timestamp' } as const;
  const zoned = { logicalType: 'timestamp', withTimeZone: true } as const;
  assert.is(encodeValue('2024-01-31 10:11:12', naive), '2024-01-31T10:11:12');
  assert.is(encodeValue('2024-01-31 10:11:12.120000', naive), '2024-01-31T10:11:12.12');
  assert.is(encodeValue('2024-01-31', naive), '2024-01-31T00:00:00');
  assert.is(encodeValue('2024-01-31 10:11:12.123456+00', zoned), '2024-01-31T10:11:12.123456Z');
  assert.is(encodeValue('2024-01-31 01:11:12+05:30', zoned), '2024-01-30T19:41:12Z');
  assert.is(encodeValue('2024-12-31 23:30:00-03', zoned), '2025-01-01T02:30:00Z');
  assert.is(encodeValue('1900-01-01 00:00:00+00:53:28', zoned), '1899-12-31T23:06:32Z');
  assert.is(encodeValue('2024-01-31 10:11:12', zoned), '2024-01-31T10:11:12Z');
  assert.is(encodeValue('2024-01-31T10:11:12Z', zoned), '2024-01-31T10:11:12Z');
  assert.is(encodeValue('0099-06-01 12:00:00+00', zoned), '0099-06-01T12:00:00Z');
  assert.is(encodeValue('-infinity', zoned), '-infinity');
  assert.is(encodeValue(new Date(Date.UTC(2024, 0, 31, 10, 11, 12)), zoned), '2024-01-31T10:11:12Z');
});

test('json, uuid, binary and strings', () => {
  assert.equal(encodeValue('{"a":[1,null]}', { logicalType: 'json' }), { a: [1, null] });
  assert.equal(encodeValue({ at: new Date(0), n: 5n, bytes: Buffer.from([255]) }, { logicalType: 'json' }),
    { at: '1970-01-01T00:00:00.000Z', n: '5', bytes: '/w==' });
  assert.equal(encodeValue(['{1,2}'], { logicalType: 'json' }), ['{1,2}']);
  assert.is(encodeValue('not json', { logicalType: 'json' }), 'not json');
  assert.is(encodeValue('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', { logicalType: 'uuid' }), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  assert.is(encodeValue(new Uint8Array([1, 2, 255]), { logicalType: 'binary' }), 'AQL/');
  assert.is(encodeValue(Buffer.from([1, 2, 255]).subarray(1), { logicalType: 'binary' }), 'Av8=');
  assert.is(encodeValue('\\x0102ff', { logicalType: 'binary' }), 'AQL/');
  assert.is(encodeValue(12, { logicalType: 'string' }), '12');
  assert.is(encodeValue(null, { logicalType: 'string' }), null);
  assert.is(encodeValue(undefined, { logicalType: 'integer' }), null);
});

test('encodeResult cuts at maxRows and counts returned rows, or affected rows for DML', () => {
  const columns = [{ name: 'id', logicalType: 'integer' as const }];
  const rows = [{ id: '1' }, { id: '2' }, { id: '3' }];
  assert.equal(encodeResult(columns, rows, { maxRows: 2 }), {
    columns: [{ name: 'id', logicalType: 'integer' }], rows: [{ id: 1 }, { id: 2 }], rowCount: 2, truncated: true, truncatedBy: 'maxRows',
  });
  assert.is(encodeResult(columns, rows, { maxRows: 3 }).truncated, false);
  assert.equal(encodeResult([], [], { affectedRows: 4 }), { columns: [], rows: [], rowCount: 4, truncated: false });
});

test('encodeResult cuts at maxBytes, counted exactly as the JSON of the rows kept', () => {
  const columns = [{ name: 'name', logicalType: 'string' as const }];
  const rows = [{ name: 'é' }, { name: 'ab' }, { name: 'c' }];
  // [{"name":"é"},{"name":"ab"}] is 29 bytes: é is two in UTF-8
  const two = encodeResult(columns, rows, { maxBytes: 29 });
  assert.equal(two.rows, [{ name: 'é' }, { name: 'ab' }]);
  assert.is(Buffer.byteLength(JSON.stringify(two.rows)), 29);
  assert.equal([two.truncated, two.truncatedBy], [true, 'maxBytes']);
  assert.equal(encodeResult(columns, rows, { maxBytes: 28 }).rows, [{ name: 'é' }]);
  assert.equal(encodeResult(columns, rows, { maxBytes: 1 }).rows, [], 'not even the brackets fit');
  const all = encodeResult(columns, rows, { maxBytes: 42, maxRows: 3 });
  assert.equal([all.rowCount, all.truncated, all.truncatedBy], [3, false, undefined], 'exactly the budget: nothing cut');
});

test.run();
