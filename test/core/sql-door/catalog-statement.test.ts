import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { catalogStatement, loadCatalogGrammar } from '../../../core/sql-door/catalog/catalog-statement.js';
import { JDBC, PSQL } from './catalog-fixtures.js';

const kindOf = (sql: string) => catalogStatement(sql)?.kind;

const handles = suite('catalog statements: what the mirror answers and what goes to the datasource');
handles.before(() => loadCatalogGrammar());

handles('every catalog statement psql 15 and the JDBC driver sent is claimed', () => {
  const captured = [...PSQL.commands.flatMap((entry) => entry.queries), ...JDBC.calls.map((entry) => entry.sql)];
  assert.ok(captured.length >= 20);
  for (const sql of captured) assert.is(kindOf(sql), 'select', sql.slice(0, 120));
});

handles('session and server functions without a FROM are claimed; SHOW too', () => {
  for (const sql of [
    'SELECT version()', 'select current_schema()', 'SELECT current_schema, session_user', "select current_setting('server_version_num')",
    "SELECT pg_catalog.set_config('search_path', '', false)", 'select pg_backend_pid()', 'select pg_catalog.now()',
  ]) assert.is(kindOf(sql), 'select', sql);
  assert.is(kindOf('SHOW search_path'), 'show');
  assert.is(kindOf('show transaction isolation level'), 'show');
});

handles('a statement reading a relation of the VDB, or no catalog at all, is the datasource\'s', () => {
  for (const sql of [
    'select 1', 'select now()', 'select $1::int', 'select * from sales.customers', 'select * from customers',
    'select c.relname, x.id from pg_catalog.pg_class c join sales.customers x on true',
    'select * from pg_class where oid in (select id from sales.orders)',
    'select version(), upper(name) from sales.customers',
    'select sales.discount(1)', 'select version(), sales.discount(1)', 'select sales.discount(c.oid::int) from pg_catalog.pg_class c',
  ]) assert.is(kindOf(sql), undefined, sql);
});

handles('CTEs are followed: a CTE name is no relation, a CTE over VDB data is not the catalog\'s', () => {
  assert.is(kindOf('with t as (select relname from pg_class) select * from t'), 'select');
  assert.is(kindOf('with t as (select * from sales.customers) select * from t, pg_class'), undefined);
  assert.is(kindOf('with pg_x as (select 1) select * from sales.pg_x'), undefined);
});

handles('writes, locks, SELECT INTO, several statements and unparseable text are never claimed', () => {
  for (const sql of [
    'with d as (delete from pg_catalog.pg_class returning 1) select * from d',
    'insert into pg_catalog.pg_description values (1, 2, 3, $$x$$)',
    'select * from pg_class for update', 'select * into t from pg_class',
    'select version(); select version()', 'SET search_path = sales', 'select from where', '',
  ]) assert.is(kindOf(sql), undefined, sql);
});

handles('psql 15\'s \\l names pg_database.daticulocale, which the mirror\'s PostgreSQL calls datlocale', () => {
  const list = PSQL.commands.find((entry) => entry.command === '\\l')!.queries[0]!;
  const statement = catalogStatement(list)!;
  assert.match(list, 'd.daticulocale as "ICU Locale"');
  assert.match(statement.mirrorSql, 'd.datlocale as "ICU Locale"');
  assert.not.match(statement.mirrorSql, 'daticulocale');
  assert.is(catalogStatement("select 'daticulocale' as daticulocale, relname from pg_class")!.mirrorSql, "select 'daticulocale' as daticulocale, relname from pg_class");
});

handles('version() and current_setting() are the door\'s own in the mirror (PGlite would name itself), under the column name the client wrote', () => {
  assert.is(catalogStatement('SELECT version()')!.mirrorSql, 'SELECT pg_toast.version()');
  assert.is(catalogStatement('select PG_CATALOG.Version ( ) as v')!.mirrorSql, 'select pg_toast.version( ) as v');
  assert.is(catalogStatement("select current_setting('server_version_num'), pg_catalog.current_setting('x', true)")!.mirrorSql,
    "select pg_toast.current_setting('server_version_num'), pg_toast.current_setting('x', true)");
  // a column or a quoted name of another spelling is left as written
  assert.is(catalogStatement('select "Version"() from pg_class')?.mirrorSql, 'select "Version"() from pg_class');
  assert.is(catalogStatement('select relname as version from pg_class')!.mirrorSql, 'select relname as version from pg_class');
});

handles('a column\'s statistics target selected without an alias reads -1 where PostgreSQL 17 and later hold NULL (pg_dump 15 reads NULL as 0)', () => {
  assert.is(catalogStatement('SELECT a.attnum, a.attstattarget, a.attname FROM pg_catalog.pg_attribute a WHERE a.attstattarget > 0')!.mirrorSql,
    'SELECT a.attnum, coalesce(a.attstattarget, -1) as attstattarget, a.attname FROM pg_catalog.pg_attribute a WHERE a.attstattarget > 0');
  assert.is(catalogStatement('select attstattarget as t from pg_attribute')!.mirrorSql, 'select attstattarget as t from pg_attribute');
});

handles.run();
