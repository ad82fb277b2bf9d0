import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { binaryForm, binaryParameter, PG_TYPE, textForm } from '../../../core/sql-door/pg-types.js';
import { positionalText } from '../../../core/sql-door/placeholders.js';
import { sessionCommand } from '../../../core/sql-door/session-commands.js';
import { WireError } from '../../../core/sql-door/wire-errors.js';

const values = suite('the SQL front door: values in PostgreSQL text and binary forms, parameters, session statements');

values('JSON-encoded values become PostgreSQL text: booleans t/f, bytes \\x hex, timestamps without T, an instant with +00, JSON as text', () => {
  assert.is(textForm(true, 'boolean'), 't');
  assert.is(textForm('AQL/', 'binary'), '\\x0102ff');
  assert.is(textForm('2024-01-31T10:11:12.5', 'timestamp'), '2024-01-31 10:11:12.5');
  // an instant (sent as timestamptz) in UTC, as PostgreSQL writes it in a session whose zone is UTC
  assert.is(textForm('2024-01-31T09:11:12.123Z', 'timestamp'), '2024-01-31 09:11:12.123+00');
  assert.is(binaryParameter(binaryForm('2024-01-31 09:11:12.123+00', PG_TYPE.timestamptz), PG_TYPE.timestamptz), '2024-01-31 09:11:12.123+00');
  assert.is(textForm({ a: [1, 'x'] }, 'json'), '{"a":[1,"x"]}');
  assert.is(textForm(42, 'integer'), '42');
  assert.is(textForm('NaN', 'float'), 'NaN');
  assert.is(textForm(null, 'string'), null);
});

values("a double's text is PostgreSQL's: shortest round-trip digits, an exponent below 1e-4 and from 1e15 (two digits at least)", () => {
  const texts: [number, string][] = [
    [1e-5, '1e-05'], [0.0001, '0.0001'], [0.00012, '0.00012'], [1.5, '1.5'], [1000000, '1000000'], [0.1 + 0.2, '0.30000000000000004'],
    [123456789012345, '123456789012345'], [1e15, '1e+15'], [1234567890123456, '1.234567890123456e+15'], [-2.5e-7, '-2.5e-07'],
    [1e100, '1e+100'], [0, '0'], [-0, '-0'], [3.141592653589793, '3.141592653589793'],
  ];
  for (const [value, text] of texts) assert.is(textForm(value, 'float'), text, String(value));
});

values('numeric, date, time and timestamp in binary read back as the text they came from', () => {
  for (const text of ['0', '12.5', '-12.5', '1234567.0001', '0.0001', '0.00000123', '10000', '-0.5', '99999999999999999999.99', 'NaN']) {
    assert.is(binaryParameter(binaryForm(text, PG_TYPE.numeric), PG_TYPE.numeric), text, text);
  }
  for (const text of ['2024-02-29', '1999-12-31', '2000-01-01', '1970-01-01']) assert.is(binaryParameter(binaryForm(text, PG_TYPE.date), PG_TYPE.date), text);
  assert.is(binaryParameter(binaryForm('10:11:12.5', PG_TYPE.time), PG_TYPE.time), '10:11:12.5');
  assert.is(binaryParameter(binaryForm('2024-01-31 10:11:12.123456', PG_TYPE.timestamp), PG_TYPE.timestamp), '2024-01-31 10:11:12.123456');
  assert.is(binaryParameter(binaryForm('1999-12-31 23:59:59', PG_TYPE.timestamp), PG_TYPE.timestamp), '1999-12-31 23:59:59');
  assert.is(binaryParameter(binaryForm('2024-01-31 10:00:00+02', PG_TYPE.timestamptz), PG_TYPE.timestamptz), '2024-01-31 08:00:00+00');
  assert.is(binaryParameter(binaryForm('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', PG_TYPE.uuid), PG_TYPE.uuid), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  assert.is(binaryParameter(binaryForm('9007199254740993', PG_TYPE.int8), PG_TYPE.int8), '9007199254740993');
  assert.is(binaryParameter(binaryForm('-7', PG_TYPE.int4), PG_TYPE.int4), -7);
  assert.is(binaryParameter(binaryForm('t', PG_TYPE.bool), PG_TYPE.bool), true);
  assert.equal([...binaryForm('12.50', PG_TYPE.numeric)], [0, 2, 0, 0, 0, 0, 0, 2, 0, 12, 19, 136]);
});

values('$n becomes ? in code only, the values in the order the text takes them; a literal ? is escaped (PostgreSQL) or refused (MySQL)', () => {
  const postgres = new PostgresDialect('postgres');
  const text = "select $2, '$1 ?', \"a$1\", $1 /* $3 */ -- $4\n, x$1, $$ $1 $$, $2 ? 'k' from t";
  const positional = positionalText(text, postgres);
  assert.is(positional.sql, "select ?, '$1 \\?', \"a$1\", ? /* $3 */ -- $4\n, x$1, $$ $1 $$, ? \\? 'k' from t");
  assert.equal(positional.order, [1, 0, 1]);
  assert.is(positional.parameterCount, 2);
  const mysql = new MysqlDialect('mysql');
  assert.is(positionalText('select `a$1` from t where id = $1', mysql).sql, 'select `a$1` from t where id = ?');
  assert.throws(() => positionalText("select '?' from t", mysql), (error: unknown) => error instanceof WireError && error.sqlState === '0A000');
});

values('session statements drivers send are recognised; a statement for the VDB is not', () => {
  assert.equal(sessionCommand('SET extra_float_digits = 3'), { kind: 'set', name: 'extra_float_digits', value: '3' });
  assert.equal(sessionCommand("set application_name to 'PostgreSQL JDBC Driver';"), { kind: 'set', name: 'application_name', value: 'PostgreSQL JDBC Driver' });
  assert.equal(sessionCommand('SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED'), { kind: 'tag', tag: 'SET' });
  assert.equal(sessionCommand('SET TIME ZONE \'UTC\''), { kind: 'set', name: 'timezone', value: 'UTC' });
  assert.equal(sessionCommand('/* hi */ SHOW TimeZone'), { kind: 'show', name: 'timezone' });
  assert.equal(sessionCommand('start transaction read only'), { kind: 'begin' });
  assert.equal(sessionCommand('END'), { kind: 'commit' });
  assert.is(sessionCommand('select set_config(\'role\', \'x\', false)'), undefined);
  assert.is(sessionCommand('settle'), undefined);
  assert.equal(sessionCommand("SELECT pg_catalog.set_config('search_path', '', false);"), { kind: 'set-config', name: 'search_path', value: '' });
  assert.equal(sessionCommand('SHOW TRANSACTION  ISOLATION LEVEL'), { kind: 'show', name: 'transaction_isolation' });
  assert.equal(sessionCommand('show all'), { kind: 'show-all' });
  assert.equal(sessionCommand('PREPARE getColumnACLs(pg_catalog.oid) AS\nSELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = $1'),
    { kind: 'prepare', name: 'getcolumnacls', query: 'SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = $1' });
  assert.equal(sessionCommand("EXECUTE dumpFunc('16384', 7, NULL, 'it''s')"), { kind: 'execute', name: 'dumpfunc', values: ['16384', '7', null, "it's"] });
  assert.equal(sessionCommand('deallocate prepare all'), { kind: 'deallocate', name: undefined });
  assert.equal(sessionCommand('FETCH BACKWARD ALL IN "Rows"'), { kind: 'fetch', name: 'Rows', direction: { kind: 'backward', count: Infinity }, move: false });
  assert.equal(sessionCommand('LOCK TABLE ONLY sales."Order Lines" IN ACCESS SHARE MODE'), { kind: 'lock', relations: [{ schema: 'sales', name: 'Order Lines' }], mode: 'access share' });
});

values.run();
