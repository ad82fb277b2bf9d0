import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualDatabase } from '../../../core/plugin-api/vdb.js';
import { createCatalogResponder, type CatalogAnswer, type CatalogCaller, type CatalogResponder } from '../../../core/sql-door/catalog/index.js';
import { callerOf, jdbcQuery, postgresJsArrayTypesQuery, psqlQueries, retailOnPglite, shopOnMysql } from './catalog-fixtures.js';

/** A column of an answer by name, as text. */
function column(answer: CatalogAnswer, name: string): (string | null)[] {
  const at = answer.fields.findIndex((field) => field.name.toLowerCase() === name.toLowerCase());
  if (at < 0) throw new Error(`no field ${name} in ${answer.fields.map((field) => field.name).join(', ')}`);
  return answer.rows.map((row) => row[at] ?? null);
}

/** Runs psql's statements for a command as psql does: later ones get the oid the first one found. */
async function psql(responder: CatalogResponder, command: string, caller: CatalogCaller): Promise<CatalogAnswer[]> {
  const [first, ...rest] = psqlQueries(command);
  const answers = [await responder.answer(first!, [], caller)];
  const oid = answers[0]!.rows[0]?.[0];
  for (const sql of rest) {
    if (oid === undefined || oid === null) break;
    answers.push(await responder.answer(sql.replaceAll('{{oid}}', oid), [], caller));
  }
  return answers;
}

interface Context { responder: CatalogResponder; retail: VirtualDatabase }
const answers = suite<Context>('catalog answers: psql, JDBC and BI statements see exactly the caller\'s relations and columns');

answers.before(async (context) => {
  context.responder = await createCatalogResponder({ maxMirrors: 4 });
  context.retail = await retailOnPglite();
});
answers.after(({ responder }) => responder.close());

answers('psql \\dt and \\dv list the VDB relations the caller may read, and none outside the VDB', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  const [tables] = await psql(responder, '\\dt', clerk);
  assert.equal(tables!.fields.map((field) => field.name), ['Schema', 'Name', 'Type', 'Owner']);
  assert.equal(column(tables!, 'Name'), ['customers', 'order_lines', 'orders']);
  assert.equal(column(tables!, 'Schema'), ['sales', 'sales', 'sales']);
  assert.equal(column((await psql(responder, '\\dv', clerk))[0]!, 'Name'), ['customer_order_totals']);
  // the analyst may not read the view: it does not exist for them
  const analyst = callerOf(retail, 'analyst');
  assert.equal(column((await psql(responder, '\\dt sales.*', analyst))[0]!, 'Name'), ['customers', 'order_lines', 'orders']);
  assert.equal((await psql(responder, '\\dv', analyst))[0]!.rows, []);
  assert.equal(column((await psql(responder, '\\d', analyst))[0]!, 'Name'), ['customers', 'order_lines', 'orders']);
});

answers('psql \\d customers shows a restricted caller only its granted columns, with their types and key', async ({ responder, retail }) => {
  const described = await psql(responder, '\\d customers', callerOf(retail, 'analyst'));
  assert.is(described.length, psqlQueries('\\d customers').length);
  const attributes = described[2]!;
  assert.equal(column(attributes, 'attname'), ['id', 'name', 'region', 'created_at']);
  // timestamptz in the database: a `timestamp` holding an instant, timestamptz in the mirror too
  assert.equal(column(attributes, 'format_type'), ['integer', 'text', 'text', 'timestamp with time zone']);
  assert.equal(column(attributes, 'attnotnull'), ['t', 't', 't', 't']);
  assert.equal(column(described[3]!, 'relname'), ['customers_pkey']);
  assert.equal(column(described[3]!, 'indisprimary'), ['t']);
  // the clerk sees the e-mail the analyst may not
  const clerkColumns = column((await psql(responder, '\\d customers', callerOf(retail, 'clerk')))[2]!, 'attname');
  assert.ok(clerkColumns.includes('email'));
  assert.not.ok(column(attributes, 'attname').includes('email'));
  // "Referenced by": the orders' key to customers, both ends visible to the analyst
  assert.equal(column(described[5]!, 'conname'), ['orders_customer_id_fkey']);
  assert.equal(column(described[5]!, 'condef'), ['FOREIGN KEY (customer_id) REFERENCES customers(id)']);
});

answers('foreign keys: only those whose both ends are in the VDB and visible', async ({ responder, retail }) => {
  const keys = `select conrelid::pg_catalog.regclass::text, conname from pg_catalog.pg_constraint where contype = 'f' order by 1, 2`;
  // order_lines.product_id references products, which is not in the VDB
  assert.equal((await responder.answer(keys, [], callerOf(retail, 'clerk'))).rows, [['order_lines', 'order_lines_order_id_fkey'], ['orders', 'orders_customer_id_fkey']]);
  const hiddenKey = { ...retail, dataRoles: [{ name: 'partial', grants: [{ resource: 'sales.orders', allow: ['select' as const] }, { resource: 'sales.customers', allow: ['select' as const], columns: ['name'] }] }] };
  assert.equal((await responder.answer(keys, [], callerOf(hiddenKey, 'partial'))).rows, []);
});

answers('psql \\dn lists only the VDB schemas; \\df the functions the caller may execute, with their signatures', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  assert.equal(column((await psql(responder, '\\dn', clerk))[0]!, 'Name'), ['sales']);
  // the retail seed has no function
  assert.equal((await psql(responder, '\\df', clerk))[0]!.rows, []);
  const admin = callerOf(shopOnMysql, 'admin');
  const [functions] = await psql(responder, '\\df', admin);
  assert.equal(functions!.fields.map((field) => field.name), ['Schema', 'Name', 'Result data type', 'Argument data types', 'Type']);
  assert.equal(functions!.rows, [
    ['hr', 'give_raise', null, 'IN integer, IN numeric', 'proc'],
    ['shop', 'price_with_tax', 'numeric', 'numeric, integer', 'func'],
  ]);
  // a shell: its signature and type, no body reaching any data
  assert.equal((await responder.answer('select pg_catalog.pg_get_function_result(oid), prosrc from pg_catalog.pg_proc where proname = $1', ['price_with_tax'], admin)).rows,
    [['numeric', 'select null::numeric']]);
  // the buyer's grants cover columns of shop.items only: no function to execute, none to list
  assert.equal((await psql(responder, '\\df', callerOf(shopOnMysql, 'buyer')))[0]!.rows, []);
});

answers('the mirror runs as the caller\'s database role: current_user, session_user and the owners psql shows', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  assert.ok(responder.handles('select current_user'));
  assert.equal((await responder.answer('select current_user, session_user, current_role', [], clerk)).rows, [['vdb_retail_v1_clerk', 'vdb_retail_v1_clerk', 'vdb_retail_v1_clerk']]);
  assert.equal(column((await psql(responder, '\\dt', clerk))[0]!, 'Owner'), ['vdb_retail_v1_clerk', 'vdb_retail_v1_clerk', 'vdb_retail_v1_clerk']);
  assert.equal(column((await psql(responder, '\\l', clerk))[0]!, 'Owner'), ['vdb_retail_v1_clerk']);
  assert.equal((await responder.answer('select current_user', [], callerOf(retail, 'analyst'))).rows, [['vdb_retail_v1_analyst']]);
  // not a superuser: the mirror's catalogs cannot be edited from a statement, even in its rolled-back transaction
  assert.equal((await responder.answer('select rolsuper from pg_catalog.pg_roles where rolname = current_user', [], clerk)).rows, [['f']]);
});

answers('psql \\l lists the VDB as the one database; current_database() names it', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  const [databases] = await psql(responder, '\\l', clerk);
  assert.equal(column(databases!, 'Name'), ['retail@1']);
  assert.ok(databases!.fields.some((field) => field.name === 'ICU Locale'));
  assert.equal((await responder.answer('select current_database()', [], clerk)).rows, [['retail@1']]);
});

answers('JDBC getTables, getColumns, getPrimaryKeys and getSchemas answer from the grants', async ({ responder, retail }) => {
  const analyst = callerOf(retail, 'analyst');
  const tables = await responder.answer(jdbcQuery('getTables(null, null, "%", {TABLE, VIEW})'), [], analyst);
  assert.equal(column(tables, 'table_name'), ['customers', 'order_lines', 'orders']);
  assert.equal(column(tables, 'table_type'), ['TABLE', 'TABLE', 'TABLE']);
  const everything = await responder.answer(jdbcQuery('getTables(null, null, "%", null)'), [], analyst);
  const userRelations = everything.rows.filter((row) => row[1] === 'sales').map((row) => `${row[2]} ${row[3]}`);
  // as a server answers: the keys' indexes too, and nothing of products or the view
  assert.equal(userRelations, ['customers_pkey INDEX', 'order_lines_pkey INDEX', 'orders_pkey INDEX', 'customers TABLE', 'order_lines TABLE', 'orders TABLE']);
  assert.equal(everything.rows.filter((row) => !/^(pg_|information_schema$|sales$)/.test(row[1]!)), []);

  // the driver builds COLUMN_NAME, TYPE_NAME, IS_NULLABLE... from these
  const columns = await responder.answer(jdbcQuery('getColumns(null, "sales", "customers"'), [], analyst);
  assert.equal(column(columns, 'attname'), ['id', 'name', 'region', 'created_at']);
  assert.equal(column(columns, 'atttypid'), ['23', '25', '25', '1184']);
  assert.equal(column(columns, 'attnotnull'), ['t', 't', 't', 't']);
  const keys = await responder.answer(jdbcQuery('getPrimaryKeys(null, "sales", "customers")'), [], analyst);
  assert.equal(column(keys, 'column_name'), ['id']);
  assert.equal(column(keys, 'pk_name'), ['customers_pkey']);
  const schemas = column(await responder.answer(jdbcQuery('getSchemas()'), [], analyst), 'table_schem');
  assert.ok(schemas.includes('sales'));
  assert.not.ok(schemas.includes('public'));
});

answers('JDBC getImportedKeys and getExportedKeys: the key between visible relations', async ({ responder, retail }) => {
  const analyst = callerOf(retail, 'analyst');
  const settings = await responder.answer(jdbcQuery('getImportedKeys(null, "sales", "orders") (first, once per connection)'), [], analyst);
  assert.equal(settings.rows, [['32']]);
  for (const call of ['getImportedKeys(null, "sales", "orders")', 'getExportedKeys(null, "sales", "customers")']) {
    const keys = await responder.answer(jdbcQuery(call), [], analyst);
    assert.equal(
      keys.rows.map((_, i) => ['pktable_name', 'pkcolumn_name', 'fktable_name', 'fkcolumn_name', 'fk_name'].map((name) => column(keys, name)[i])),
      [['customers', 'id', 'orders', 'customer_id', 'orders_customer_id_fkey']],
      call,
    );
  }
});

answers('a VDB on MariaDB: its relations and grants, with logical types shown as PostgreSQL types', async ({ responder }) => {
  const buyer = callerOf(shopOnMysql, 'buyer');
  const tables = await responder.answer(jdbcQuery('getTables(null, null, "%", {TABLE, VIEW})'), [], buyer);
  assert.equal(column(tables, 'table_schem'), ['shop']);
  assert.equal(column(tables, 'table_name'), ['items']);
  const columns = await responder.answer(jdbcQuery('getColumns(null, "sales", "customers"').replace("'sales'", "'shop'").replace("'customers'", "'items'"), [], buyer);
  assert.equal(column(columns, 'attname'), ['sku', 'title', 'price', 'in_stock']);
  assert.equal(column(columns, 'atttypid'), ['23', '25', '1700', '16']);
  assert.equal(column((await psql(responder, '\\dn', buyer))[0]!, 'Name'), ['shop']);

  const admin = callerOf(shopOnMysql, 'admin');
  assert.equal(column((await psql(responder, '\\dn', admin))[0]!, 'Name'), ['hr', 'shop']);
  const adminColumns = await responder.answer(
    `select column_name, data_type from information_schema.columns where table_schema = 'shop' and table_name = 'items' order by ordinal_position`, [], admin);
  assert.equal(adminColumns.rows, [
    ['sku', 'integer'], ['title', 'text'], ['price', 'numeric'], ['in_stock', 'boolean'], ['cost', 'numeric'],
    ['attributes', 'json'], ['added_at', 'timestamp without time zone'], ['views', 'bigint'], ['changed_at', 'timestamp with time zone'],
  ]);
  const quoted = await responder.answer(
    `select table_name, column_name from information_schema.columns where table_schema = 'shop' and table_name <> 'items' order by ordinal_position`, [], admin);
  assert.equal(quoted.rows, [['Order Items', 'Sku'], ['Order Items', 'say "hi"']]);
});

answers('BI-style information_schema statements: columns, tables and primary keys of the visible relations only', async ({ responder, retail }) => {
  const analyst = callerOf(retail, 'analyst');
  const columns = await responder.answer(
    `SELECT table_schema, table_name, column_name, data_type, is_nullable FROM information_schema.columns
     WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY table_schema, table_name, ordinal_position`, [], analyst);
  assert.equal([...new Set(column(columns, 'table_name'))], ['customers', 'order_lines', 'orders']);
  assert.equal(columns.rows.filter((row) => row[1] === 'customers').map((row) => row[2]), ['id', 'name', 'region', 'created_at']);
  const tables = await responder.answer(
    `select table_schema, table_name, table_type from information_schema.tables where table_schema = $1 order by table_name`, ['sales'], callerOf(retail, 'clerk'));
  assert.equal(tables.rows, [
    ['sales', 'customer_order_totals', 'VIEW'], ['sales', 'customers', 'BASE TABLE'], ['sales', 'order_lines', 'BASE TABLE'], ['sales', 'orders', 'BASE TABLE'],
  ]);
  const keys = await responder.answer(
    `select kcu.table_name, kcu.column_name from information_schema.table_constraints tc
     join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
     where tc.constraint_type = 'PRIMARY KEY' and tc.table_schema = 'sales' order by 1, kcu.ordinal_position`, [], analyst);
  assert.equal(keys.rows, [['customers', 'id'], ['order_lines', 'order_id'], ['order_lines', 'line_no'], ['orders', 'id']]);
});

answers('answers are PostgreSQL text with real type OIDs; a command tag per statement', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  const answer = await responder.answer(`select relname, relhasindex, oid, relnatts from pg_catalog.pg_class where relname = 'customers'`, [], clerk);
  assert.equal(answer.fields, [{ name: 'relname', typeOid: 19 }, { name: 'relhasindex', typeOid: 16 }, { name: 'oid', typeOid: 26 }, { name: 'relnatts', typeOid: 21 }]);
  assert.equal(answer.rows[0]?.slice(0, 2), ['customers', 't']);
  assert.match(answer.rows[0]![2]!, /^\d+$/);
  assert.is(answer.command, 'SELECT 1');
  const typed = await responder.answer('select typname from pg_catalog.pg_type where oid = $1', ['1700'], clerk);
  assert.equal(typed.rows, [['numeric']]);
  const shown = await responder.answer('SHOW search_path', [], clerk);
  assert.equal([shown.command, shown.rows], ['SHOW', [['sales']]]);
  assert.equal((await responder.answer('select current_schema()', [], clerk)).rows, [['sales']]);
});

answers('version() and server_version_num are the door\'s, not the mirror\'s PGlite; the mirror\'s superuser is not listed', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  const version = await responder.answer("select version(), pg_catalog.current_setting('server_version_num') as num, current_setting('server_version')", [], clerk);
  assert.equal(version.fields.map((field) => field.name), ['version', 'num', 'current_setting']);
  assert.equal(version.rows, [['PostgreSQL 15.0 (vdb-service)', '150000', '15.0 (vdb-service)']]);
  assert.equal((await responder.answer("select current_setting('search_path')", [], clerk)).rows, [['sales']]);
  // psql's \du: roles not named pg_*
  const roles = await responder.answer("select r.rolname from pg_catalog.pg_roles r where r.rolname !~ '^pg_' order by 1", [], clerk);
  assert.equal(roles.rows, [[clerk.role]]);
});

answers('describe: parameter types and fields of a statement without running it, as Describe of a prepared statement', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  const described = await responder.describe('select c.relname, c.relnatts from pg_catalog.pg_class c where c.relnamespace = $1::regnamespace and c.relname = $2', clerk);
  // regnamespace and name
  assert.equal(described, { paramTypeOids: [4089, 19], fields: [{ name: 'relname', typeOid: 19 }, { name: 'relnatts', typeOid: 21 }] });
  // postgres.js describes, then runs, its array-type query on every new connection
  const arrays = postgresJsArrayTypesQuery();
  assert.ok(responder.handles(arrays));
  assert.equal(await responder.describe(arrays, clerk), { paramTypeOids: [], fields: [{ name: 'oid', typeOid: 26 }, { name: 'typarray', typeOid: 26 }] });
  const pairs = (await responder.answer(arrays, [], clerk)).rows;
  assert.ok(pairs.some(([oid, array]) => oid === '23' && array === '1007'), 'int4 and its array type int4[]');
  const error = await responder.describe('select nope from pg_catalog.pg_class', clerk).catch((failure: unknown) => failure);
  assert.is((error as { code?: string }).code, '42703');
});

answers('a statement changes nothing for the next: settings are rolled back, writes refused', async ({ responder, retail }) => {
  const clerk = callerOf(retail, 'clerk');
  await responder.answer(`select pg_catalog.set_config('search_path', 'pg_catalog', false)`, [], clerk);
  assert.equal((await responder.answer('SHOW search_path', [], clerk)).rows, [['sales']]);
  const error = await responder.answer('select * from sales.customers', [], clerk).catch((failure: unknown) => failure);
  assert.is((error as { code?: string }).code, '0A000');
  const missing = await responder.answer('select * from pg_catalog.pg_nope', [], clerk).catch((failure: unknown) => failure);
  assert.is((missing as { code?: string }).code, '42P01');
});

answers.run();

const limits = suite('catalog answers: a hostile statement is bounded and the mirror comes back');

limits('a statement over the time limit fails with 57014 and the next statement is answered', async () => {
  const responder = await createCatalogResponder({ maxMirrors: 1, statementTimeoutMs: 1_000 });
  try {
    const caller = callerOf(shopOnMysql, 'buyer');
    const slow = await responder.answer('select pg_catalog.pg_sleep(30)', [], caller).catch((failure: unknown) => failure);
    assert.is((slow as { code?: string }).code, '57014');
    assert.equal((await responder.answer('select nspname from pg_catalog.pg_namespace where nspname = $1', ['shop'], caller)).rows, [['shop']]);
  } finally {
    await responder.close();
  }
});

limits.run();
