import { roleChanges } from '../../core/authorization/role-changes.js';
import { planVdbRoles } from '../../core/authorization/role-plan.js';
import type { CatalogColumn } from '../../core/plugin-api/catalog.js';
import type { SqlDialect } from '../../core/plugin-api/sql-dialect.js';
import type { DataRole, VirtualDatabase } from '../../core/plugin-api/vdb.js';

const column = (name: string): CatalogColumn => ({ name, nativeType: 'text', logicalType: 'string', nullable: false });

/**
 * A grant set to compile on the dialects whose mapping is tested as text (SQL Server, Oracle) and on
 * MySQL: the analyst reads the orders and two columns of the customers, the clerk writes orders and the
 * customers' emails and may call `sales.discount`.
 */
export function mappingVdb(dataRoles: DataRole[]): VirtualDatabase {
  return {
    name: 'shop',
    version: '1',
    datasource: 'db',
    schemas: [{ name: 'sales', datasource: 'db' }],
    dataRoles,
    file: '/bundle/vdbs/shop.yaml',
    catalog: {
      schemas: ['sales'],
      relations: [
        { schema: 'sales', name: 'customers', kind: 'table', columns: ['id', 'email', 'region'].map(column), primaryKey: ['id'], uniqueKeys: [], foreignKeys: [], datasource: 'db' },
        { schema: 'sales', name: 'orders', kind: 'table', columns: ['id', 'total'].map(column), primaryKey: ['id'], uniqueKeys: [], foreignKeys: [], datasource: 'db' },
      ],
      functions: [{ schema: 'sales', name: 'discount', kind: 'function', returnType: 'numeric' }],
    },
    catalogRevision: 'sha256:shop',
  };
}

export const ANALYST_READS_COLUMNS: DataRole = {
  name: 'analyst', grants: [{ resource: 'sales.orders', allow: ['select'] }, { resource: 'sales.customers', allow: ['select'], columns: ['id', 'region'] }],
};
export const ANALYST_READS_ORDERS: DataRole = { name: 'analyst', grants: [{ resource: 'sales.orders', allow: ['select'] }] };
export const CLERK: DataRole = {
  name: 'clerk',
  grants: [
    { resource: 'sales.orders', allow: ['select', 'insert'] },
    { resource: 'sales.customers', allow: ['update'], columns: ['email'] },
    { resource: 'sales.discount', allow: ['select'] },
  ],
};

/** Every statement a first sync would run on an empty database for `vdb`, the service logging in as `svc`. */
export function compiledSync(dialect: SqlDialect, vdb: VirtualDatabase, routineKind = 'function'): string[] {
  const planned = dialect.rolePlan(planVdbRoles(vdb, 'db', dialect.maxRoleNameBytes)?.roles ?? []);
  const changes = roleChanges(planned, {
    existing: [], memberships: [], privileges: [], publicPrivileges: [], ownedSequences: [], marked: [],
    routines: [{ schema: 'sales', routine: 'discount', arguments: routineKind }],
    login: { name: 'svc', superuser: false, canBecome: [] },
  });
  return changes.flatMap((change) => dialect.roleChangeSql(change));
}
