/**
 * What the catalog suites feed the responder: the statements real clients sent to a real PostgreSQL
 * (test/fixtures/sql-door), and two VDBs, one on PGlite (its catalog introspected from the retail seed) and
 * one on a MySQL-family datasource (its catalog written here, as the mysql adapter reports one: the
 * mirror never touches the backend).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { effectiveGrants, type CallerGrants } from '../../../core/authorization/grants.js';
import type { CatalogColumn, LogicalType } from '../../../core/plugin-api/catalog.js';
import type { DataRole, VdbRelation, VirtualDatabase } from '../../../core/plugin-api/vdb.js';
import { callerCatalog, type CatalogCaller } from '../../../core/sql-door/catalog/index.js';
import { sharedPglite } from '../../support/shared-pglite.js';

const fixture = (name: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../../../../test/fixtures/sql-door/${name}`, import.meta.url)), 'utf8'));

/** psql 15's statements per backslash command; `{{oid}}` stands for the relation oid its first statement found. */
export const PSQL: { commands: { command: string; queries: string[] }[] } = fixture('psql-15-catalog-queries.json');
/** The PostgreSQL JDBC driver's statements per DatabaseMetaData call. */
export const JDBC: { calls: { call: string; sql: string }[] } = fixture('jdbc-42.5-metadata-queries.json');

/**
 * The statement postgres.js sends on each new connection (its `fetch_types`, on by default) to learn the
 * array types, read from the installed client's source so it is exactly what that client sends.
 */
export function postgresJsArrayTypesQuery(): string {
  const source = readFileSync(fileURLToPath(new URL('../../../../node_modules/postgres/src/connection.js', import.meta.url)), 'utf8');
  const found = /async function fetchArrayTypes\(\) \{[\s\S]*?new Query\(\[`([\s\S]*?)`\]/.exec(source)?.[1];
  if (found === undefined) throw new Error('postgres.js no longer fetches array types this way');
  return found;
}

export function psqlQueries(command: string): string[] {
  const found = PSQL.commands.find((entry) => entry.command === command);
  if (!found) throw new Error(`no psql capture for ${command}`);
  return found.queries;
}

export function jdbcQuery(call: string): string {
  const found = JDBC.calls.find((entry) => entry.call === call) ?? JDBC.calls.find((entry) => entry.call.startsWith(call));
  if (!found) throw new Error(`no JDBC capture for ${call}`);
  return found.sql;
}

/** The demo's data roles (descriptors/vdbs/retail-1.yaml): the analyst sees no customer e-mail and no view. */
const RETAIL_ROLES: DataRole[] = [
  { name: 'clerk', grants: [{ resource: 'sales', allow: ['select', 'insert', 'update', 'delete'] }] },
  {
    name: 'analyst',
    grants: [
      { resource: 'sales.orders', allow: ['select'] },
      { resource: 'sales.order_lines', allow: ['select'] },
      { resource: 'sales.products', allow: ['select'] },
      { resource: 'sales.customers', allow: ['select'], columns: ['id', 'name', 'region', 'created_at'] },
    ],
  },
];

/**
 * The retail VDB on PGlite, exposing every relation of the seed but `sales.products` (as `include` would):
 * products exists in the database, never in the VDB.
 */
export async function retailOnPglite(): Promise<VirtualDatabase> {
  const catalog = await (await sharedPglite()).introspect(['sales']);
  const relations: VdbRelation[] = catalog.relations
    .filter((relation) => relation.name !== 'products')
    .map((relation) => ({ ...relation, datasource: 'retail_db' }));
  return {
    name: 'retail', version: '1', file: '', datasource: 'retail_db', schemas: [{ name: 'sales', datasource: 'retail_db' }],
    dataRoles: RETAIL_ROLES, catalog: { ...catalog, relations }, catalogRevision: 'sha256:test',
  };
}

function mysqlColumn(name: string, nativeType: string, logicalType: LogicalType, nullable = false): CatalogColumn {
  return { name, nativeType, logicalType, nullable, ...(nativeType === 'timestamp' && { withTimeZone: true }) };
}

/** A shop VDB on MariaDB: `shop` granted in part to the buyer, `hr` to nobody but the admin. */
export const shopOnMysql: VirtualDatabase = {
  name: 'shop', version: '3', file: '', datasource: 'shop_mysql',
  schemas: [{ name: 'shop', datasource: 'shop_mysql' }, { name: 'hr', datasource: 'shop_mysql' }],
  dataRoles: [
    { name: 'admin', grants: [{ resource: 'shop', allow: ['select'] }, { resource: 'hr', allow: ['select'] }] },
    { name: 'buyer', grants: [{ resource: 'shop.items', allow: ['select'], columns: ['sku', 'title', 'price', 'in_stock'] }] },
  ],
  catalogRevision: 'sha256:shop',
  catalog: {
    schemas: ['shop', 'hr'],
    functions: [
      { schema: 'hr', name: 'give_raise', kind: 'procedure', returnType: '', argumentTypes: ['integer', 'decimal'] },
      { schema: 'shop', name: 'price_with_tax', kind: 'function', returnType: 'decimal(10,2)', returns: 'decimal', argumentTypes: ['decimal', 'integer'] },
    ],
    relations: [
      {
        schema: 'shop', name: 'items', kind: 'table', datasource: 'shop_mysql', primaryKey: ['sku'], uniqueKeys: [], foreignKeys: [],
        columns: [
          mysqlColumn('sku', 'int unsigned', 'integer'),
          mysqlColumn('title', 'varchar(120)', 'string'),
          mysqlColumn('price', 'decimal(10,2)', 'decimal'),
          mysqlColumn('in_stock', 'tinyint(1)', 'boolean'),
          mysqlColumn('cost', 'decimal(10,2)', 'decimal'),
          mysqlColumn('attributes', 'json', 'json', true),
          mysqlColumn('added_at', 'datetime', 'timestamp', true),
          mysqlColumn('views', 'bigint', 'bigint', true),
          mysqlColumn('changed_at', 'timestamp', 'timestamp', true),
        ],
      },
      {
        // MySQL names that PostgreSQL must quote
        schema: 'shop', name: 'Order Items', kind: 'view', datasource: 'shop_mysql', primaryKey: [], uniqueKeys: [], foreignKeys: [],
        columns: [mysqlColumn('Sku', 'int unsigned', 'integer', true), mysqlColumn('say "hi"', 'text', 'string', true)],
      },
      {
        schema: 'hr', name: 'salaries', kind: 'table', datasource: 'shop_mysql', primaryKey: ['employee_id'], uniqueKeys: [], foreignKeys: [],
        columns: [mysqlColumn('employee_id', 'int', 'integer'), mysqlColumn('amount', 'decimal(12,2)', 'decimal')],
      },
    ],
  },
};

export function grantsOf(vdb: VirtualDatabase, ...roles: string[]): CallerGrants {
  return effectiveGrants(vdb, { subject: roles.join('+'), roles, scheme: 'test' });
}

export function callerOf(vdb: VirtualDatabase, ...roles: string[]): CatalogCaller {
  return callerCatalog(vdb, grantsOf(vdb, ...roles));
}
