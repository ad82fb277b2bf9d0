/**
 * The federation corpus's data: a small shop whose customers, regions and products (schema `fed_crm`) live in
 * one datasource and whose orders and order lines (schema `fed_shop`) live in another, with the values that
 * tell PostgreSQL's semantics apart from another engine's or another database's: NULL join keys, names a
 * case- or accent-folding collation would merge (`ada`, `Ada`, `ADA`, `ada `), integers whose division
 * truncates, numerics with scale, timestamps with and without a time zone, and ties. Every value is written
 * here (no random()), so the oracle and the sources hold the same rows.
 */

import type { Family } from './corpus-suite.js';

/** A column of a corpus's table, as each family declares it. */
export interface Column {
  name: string;
  /** The PostgreSQL type (the oracle's and the PostgreSQL family's). */
  pg: string;
  /** The MySQL/MariaDB type that holds the same logical type. */
  mysql: string;
}

/** A table of a corpus's data set, with its rows (values as literals: numbers, or texts each family reads). */
export interface ShopTable {
  schema: string;
  name: string;
  columns: Column[];
  primaryKey: string[];
  rows: (string | number | null)[][];
}

export const int = (name: string): Column => ({ name, pg: 'integer', mysql: 'int' });
export const text = (name: string, length: number): Column => ({ name, pg: `varchar(${length})`, mysql: `varchar(${length})` });
export const decimal = (name: string, precision: number, scale: number): Column => ({ name, pg: `numeric(${precision}, ${scale})`, mysql: `decimal(${precision}, ${scale})` });
// an instant: timestamptz; MySQL's TIMESTAMP holds one (the adapters' sessions run in UTC)
export const instant = (name: string): Column => ({ name, pg: 'timestamptz', mysql: 'timestamp(6) null' });
// a wall-clock time: timestamp without time zone; MySQL's DATETIME
export const wallClock = (name: string): Column => ({ name, pg: 'timestamp', mysql: 'datetime(6)' });

const customers: ShopTable = {
  schema: 'fed_crm',
  name: 'customers',
  columns: [int('id'), text('name', 40), text('email', 80), text('region', 10), int('tier'), decimal('credit', 10, 2), instant('created_at')],
  primaryKey: ['id'],
  rows: [
    [1, 'ada', 'ada@x.org', 'N', 1, '100.50', '2024-01-01 08:00:00+00'],
    [2, 'Ada', 'Ada@x.org', 'n', 2, '100.5', '2024-01-01 10:00:00+02'],
    [3, 'ADA', null, 'S', null, '0.00', '2024-01-01 08:00:00+00'],
    [4, 'ada ', 'ada2@x.org', 'S ', 3, '-20.25', '2024-01-03 23:30:00+00'],
    [5, 'Ben', 'ben@x.org', null, 1, null, '2024-01-05 12:00:00+00'],
    [6, 'ben', 'ben@X.org', 'W', 2, '7.10', '2024-01-05 12:00:00+00'],
    [7, 'Chloé', 'chloe@x.org', 'N', 3, '1000.00', '2024-01-07 00:00:00-05'],
    [8, 'chloe', 'chloe2@x.org', 'E', 1, '33.33', '2024-01-09 09:15:00+00'],
    [9, 'Zoe', 'zoe@x.org', 'S', 2, '33.33', '2024-02-01 00:00:00+00'],
    [10, 'zoe', null, 'N', null, '12.00', '2024-02-01 00:00:00+00'],
    [11, 'Émile', 'emile@x.org', 'E', 1, '5.55', '2024-02-10 18:45:30.5+00'],
    [12, 'Bob', 'bob@x.org', 'n', 2, null, '2024-02-11 06:00:00+00'],
    [13, 'bob', 'BOB@x.org', null, 3, '250.75', '2024-02-12 06:00:00+00'],
    [14, 'Dana', 'dana@x.org', 'S', 1, '0.01', '2024-03-01 12:00:00+00'],
    [15, 'dana', 'dana2@x.org', 'E', null, '-0.01', '2024-03-02 12:00:00+00'],
    [16, 'Eve', 'eve@x.org', 'N', 2, '99.99', '2024-03-03 12:00:00+00'],
  ],
};

const regions: ShopTable = {
  schema: 'fed_crm',
  name: 'regions',
  columns: [int('id'), text('code', 10), text('name', 40)],
  primaryKey: ['id'],
  // `n` and `S ` are regions of their own: equal to `N` and `S` only under a folding or padding collation
  rows: [[1, 'N', 'North'], [2, 'n', 'north (lower)'], [3, 'S', 'South'], [4, 'S ', 'South (padded)'], [5, 'E', 'East'], [6, 'C', 'Central']],
};

const products: ShopTable = {
  schema: 'fed_crm',
  name: 'products',
  columns: [int('id'), text('sku', 20), text('name', 40), text('category', 20), decimal('price', 10, 2), decimal('weight', 8, 3)],
  primaryKey: ['id'],
  rows: [
    [1, 'TEA-1', 'Green tea', 'Tea', '4.25', '0.100'],
    [2, 'TEA-2', 'green tea', 'Tea', '4.25', '0.250'],
    [3, 'COF-1', 'Coffee', 'Coffee', '7.50', '0.500'],
    [4, 'COF-2', 'coffee ', 'Coffee', '7.5', null],
    [5, 'COC-1', 'Cocoa', 'cocoa', '3.10', '0.333'],
    [6, 'MUG-1', 'Mug', null, '12.00', '0.400'],
    [7, 'MUG-2', 'MUG', null, '12.00', '0.400'],
    [8, 'SUG-1', 'Sugar', 'Pantry', '0.99', '1.000'],
    [9, 'HON-1', 'Honey', 'Pantry', '5.33', '0.350'],
    [10, 'KET-1', 'Kettle', 'Tools', '39.90', '1.200'],
    [11, 'FIL-1', 'Filter', 'Tools', '2.00', '0.010'],
    [12, 'GFT-1', 'Gift card', 'Gifts', '25.00', null],
  ],
};

const statuses = ['paid', 'Paid', 'paid ', 'shipped', 'cancelled', 'pending', 'paid', 'shipped'];
const channels = ['web', 'Web', null, 'store', 'web'];
const shipRegions = ['N', 'n', 'S', 'S ', null, 'W', 'E'];
const totals = ['50.00', '19.99', '50.00', '120.10', '0.00', '7.05', '50.0', '333.33', '19.99', '1.00'];

/** Orders 1–30: customer NULL for orders 25 and 26, a customer that does not exist (99) for 27. */
function orderRows(): (string | number | null)[][] {
  const rows: (string | number | null)[][] = [];
  for (let id = 1; id <= 30; id += 1) {
    const customer = id === 25 || id === 26 ? null : id === 27 ? 99 : ((id * 5) % 13) + 1;
    const day = ((id * 7) % 28) + 1;
    const hour = (id * 5) % 24;
    const orderedAt = `2024-02-${String(day).padStart(2, '0')} ${String(hour).padStart(2, '0')}:${id % 2 === 0 ? '30' : '00'}:00`;
    // paid an hour or so later, written in another zone for some; none for pending and cancelled orders
    const status = statuses[id % statuses.length] as string;
    const paidAt = status === 'pending' || status === 'cancelled' || id % 9 === 0
      ? null
      : `2024-02-${String(day).padStart(2, '0')} ${String((hour + 1) % 24).padStart(2, '0')}:15:00${id % 3 === 0 ? '+03' : '+00'}`;
    rows.push([id, customer, status, orderedAt, paidAt, totals[id % totals.length] as string, channels[id % channels.length] ?? null, shipRegions[id % shipRegions.length] ?? null]);
  }
  return rows;
}

const orders: ShopTable = {
  schema: 'fed_shop',
  name: 'orders',
  columns: [int('id'), int('customer_id'), text('status', 12), wallClock('ordered_at'), instant('paid_at'), decimal('total', 12, 2), text('channel', 10), text('ship_region', 10)],
  primaryKey: ['id'],
  rows: orderRows(),
};

/** One to four lines per order (none for orders 28–30); product NULL on some, 13 (no such product) on others. */
function lineRows(): (string | number | null)[][] {
  const rows: (string | number | null)[][] = [];
  for (let order = 1; order <= 27; order += 1) {
    const lines = (order % 4) + 1;
    for (let line = 1; line <= lines; line += 1) {
      const n = order * 3 + line;
      const product = n % 17 === 0 ? null : n % 19 === 0 ? 13 : (n % 11) + 1;
      const quantity = [1, 3, 7, 10, 2, 5, 11, 4][n % 8] as number;
      const unitPrice = ['4.25', '7.50', '3.10', '12.00', '0.99', '5.33', '39.90', '2.00', '4.20'][n % 9] as string;
      const discount = n % 5 === 0 ? null : ['0.125', '0.000', '0.333', '0.050'][n % 4] as string;
      rows.push([order, line, product, quantity, unitPrice, discount]);
    }
  }
  return rows;
}

const orderLines: ShopTable = {
  schema: 'fed_shop',
  name: 'order_lines',
  columns: [int('order_id'), int('line_no'), int('product_id'), int('quantity'), decimal('unit_price', 10, 2), decimal('discount', 5, 3)],
  primaryKey: ['order_id', 'line_no'],
  rows: lineRows(),
};

export const SHOP_TABLES: readonly ShopTable[] = [customers, regions, products, orders, orderLines];
export const SHOP_SCHEMAS = ['fed_crm', 'fed_shop'] as const;
export type ShopSchema = (typeof SHOP_SCHEMAS)[number];

function literal(value: string | number | null, column: Column, family: Family): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  // MySQL's TIMESTAMP takes no offset in a literal: the UTC instant, read in the session's UTC
  if (family === 'mysql' && column.pg === 'timestamptz') return `'${utcText(value)}'`;
  // MySQL's booleans are TINYINT(1)
  if (family === 'mysql' && column.pg === 'boolean') return value === 'true' ? '1' : '0';
  return `'${value.replace(/'/g, "''")}'`;
}

/** `2024-01-01 10:00:00+02` as the UTC wall-clock text `2024-01-01 08:00:00.000000`. */
function utcText(value: string): string {
  const match = /^(.*) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)$/.exec(value);
  if (!match) throw new Error(`not a timestamptz literal: ${value}`);
  const instant = new Date(`${match[1]}T${match[2]}${match[3]}:00`);
  return instant.toISOString().replace('T', ' ').replace('Z', '000');
}

/**
 * The statements that create and fill `schema`'s tables on a database of `family`: on the PostgreSQL family
 * in a schema of that name, on MySQL in a database of that name (MySQL's schema), whose collation folds case
 * and pads, as MariaDB's defaults do.
 */
export function shopSetup(family: Family, schema: ShopSchema): string[] {
  return tablesSetup(SHOP_TABLES, family, schema);
}

/** The statements that create `schema` on a database of `family` and its tables of `tables`, filled (as shopSetup). */
export function tablesSetup(tables: readonly ShopTable[], family: Family, schema: string): string[] {
  const statements = family === 'postgres'
    ? [`drop schema if exists ${schema} cascade`, `create schema ${schema}`]
    : [`drop database if exists ${schema}`, `create database ${schema} character set utf8mb4 collate utf8mb4_general_ci`];
  for (const table of tables.filter((candidate) => candidate.schema === schema)) {
    const columns = table.columns.map((column) => `${column.name} ${family === 'postgres' ? column.pg : column.mysql}`);
    statements.push(`create table ${schema}.${table.name} (${columns.join(', ')}, primary key (${table.primaryKey.join(', ')}))`);
    const values = table.rows.map((row) => `(${row.map((value, index) => literal(value, table.columns[index] as Column, family)).join(', ')})`);
    statements.push(`insert into ${schema}.${table.name} (${table.columns.map((column) => column.name).join(', ')}) values ${values.join(', ')}`);
  }
  return statements;
}

/** The VDB file of a VDB `name` over the shop: `fed_crm` on datasource crm_db, `fed_shop` on shop_db (its default); the analyst reads both. */
export function shopVdb(name: string): string {
  return `
name: ${name}
version: "1"
datasource: shop_db
schemas:
  - { name: fed_crm, datasource: crm_db }
  - { name: fed_shop }
dataRoles:
  - name: analyst
    grants:
      - { resource: fed_crm, allow: [select] }
      - { resource: fed_shop, allow: [select] }
`;
}
