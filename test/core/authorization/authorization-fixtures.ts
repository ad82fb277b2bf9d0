/** A small VDB for the authorization suites: sales (granted in parts to analysts) and hr (not granted). */
import type { Principal } from '../../../core/plugin-api/auth-scheme.js';
import { effectiveGrants, type CallerGrants } from '../../../core/authorization/grants.js';
import type { CatalogColumn, CatalogForeignKey, LogicalType } from '../../../core/plugin-api/catalog.js';
import type { DataRole, VdbRelation, VirtualDatabase } from '../../../core/plugin-api/vdb.js';

function column(name: string, logicalType: LogicalType, nullable = false): CatalogColumn {
  const nativeType: Record<LogicalType, string> = {
    string: 'text', integer: 'integer', bigint: 'bigint', decimal: 'numeric', float: 'double precision', boolean: 'boolean',
    date: 'date', time: 'time', timestamp: 'timestamp', json: 'jsonb', uuid: 'uuid', binary: 'bytea',
  };
  return { name, nativeType: nativeType[logicalType], logicalType, nullable };
}

function table(schema: string, name: string, columns: CatalogColumn[], primaryKey: string[], foreignKeys: CatalogForeignKey[] = []): VdbRelation {
  return { schema, name, kind: 'table', columns, primaryKey, uniqueKeys: [], foreignKeys, datasource: 'retail_db' };
}

function foreignKey(name: string, columns: string[], referencedRelation: string, referencedColumns: string[]): CatalogForeignKey {
  return { name, columns, referencedSchema: 'sales', referencedRelation, referencedColumns };
}

export const RELATIONS: VdbRelation[] = [
  table('sales', 'customers', [column('id', 'integer'), column('email', 'string'), column('name', 'string'), column('region', 'string', true)], ['id']),
  table('sales', 'orders', [column('id', 'integer'), column('customer_id', 'integer'), column('total', 'decimal'), column('status', 'string')], ['id'], [
    foreignKey('orders_customer_fk', ['customer_id'], 'customers', ['id']),
  ]),
  table('sales', 'order_lines', [column('order_id', 'integer'), column('line_no', 'integer'), column('product', 'string'), column('quantity', 'integer')], ['order_id', 'line_no'], [
    foreignKey('order_lines_order_fk', ['order_id'], 'orders', ['id']),
  ]),
  { ...table('sales', 'customer_totals', [column('customer_id', 'integer'), column('region', 'string', true), column('total', 'decimal', true)], []), kind: 'view' },
  table('hr', 'salaries', [column('employee_id', 'integer'), column('amount', 'decimal')], ['employee_id']),
];

export const DATA_ROLES: DataRole[] = [
  {
    name: 'analyst',
    grants: [
      { resource: 'sales.orders', allow: ['select'] },
      { resource: 'sales.customers', allow: ['select'], columns: ['id', 'region'] },
      { resource: 'sales.customer_totals', allow: ['select'] },
    ],
  },
  { name: 'clerk', grants: [{ resource: 'sales', allow: ['select', 'insert', 'update', 'delete'] }] },
];

/** The retail VDB with data roles. */
export const retailVdb: VirtualDatabase = {
  name: 'retail',
  version: '1',
  datasource: 'retail_db',
  schemas: [{ name: 'sales', datasource: 'retail_db' }, { name: 'hr', datasource: 'retail_db' }],
  dataRoles: DATA_ROLES,
  file: '/bundle/vdbs/retail.yaml',
  catalog: {
    schemas: ['sales', 'hr'],
    relations: RELATIONS,
    functions: [
      { schema: 'sales', name: 'discount', kind: 'function', returnType: 'numeric' },
      { schema: 'hr', name: 'bonus', kind: 'function', returnType: 'numeric' },
    ],
  },
  catalogRevision: 'sha256:retail-catalog-1',
};

/** The same VDB without data roles: every authenticated caller has complete access. */
export const openRetailVdb: VirtualDatabase = { ...retailVdb, name: 'retail-open', dataRoles: undefined };

export function principal(...roles: string[]): Principal {
  return { subject: `user-with-${roles.join('-') || 'no-roles'}`, roles, scheme: 'bearer' };
}

export const ANALYST: CallerGrants = effectiveGrants(retailVdb, principal('analyst'));
export const CLERK: CallerGrants = effectiveGrants(retailVdb, principal('clerk'));
export const ANYONE: CallerGrants = effectiveGrants(openRetailVdb, principal());
