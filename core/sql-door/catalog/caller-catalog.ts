import { authorizedContext } from '../../authorization/authorized-context.js';
import type { CallerGrants } from '../../authorization/grants.js';
import { callerRole } from '../../authorization/role-plan.js';
import type { VirtualDatabase } from '../../plugin-api/vdb.js';
import type { CatalogCaller, VisibleFunction } from './catalog-types.js';

/**
 * What a caller's catalog statements may show: the VDB's relations cut to the caller's grants, the same cut
 * the catalog routes and the Task API's authorized context apply (core/authorization/authorized-context.ts):
 * no relation outside the VDB, no column the grants do not let the caller select, a primary key only when
 * all its columns are visible, a foreign key only when the caller sees its columns at both ends; the
 * functions the grants let it execute; and the database role its statements run as.
 * @param maxRoleNameBytes the datasource dialect's longest role name (`SqlDialect.maxRoleNameBytes`), as the
 *   role's name is cut on the datasource
 */
export function callerCatalog(vdb: VirtualDatabase, grants: CallerGrants, maxRoleNameBytes?: number): CatalogCaller {
  const context = authorizedContext(vdb, grants);
  const zoned = new Set(vdb.catalog.relations.flatMap((relation) => relation.columns
    .filter((column) => column.withTimeZone === true)
    .map((column) => columnKey(relation.schema, relation.name, column.name))));
  const nativeTypes = new Map(vdb.catalog.relations.flatMap((relation) => relation.columns
    .map((column) => [columnKey(relation.schema, relation.name, column.name), column.nativeType] as const)));
  const executable = new Set(context.functions.map((fn) => `${fn.schema}\u0000${fn.name}`));
  return {
    vdb: vdb.name,
    version: vdb.version,
    // grant sets are interned per matched role set (grants.ts): the role names name the set
    grantsKey: grants.access === 'restricted' ? `roles:${grants.roles.join('\n')}` : grants.access,
    // a caller no single role stands for (too many data roles to combine) runs nothing: its set names it
    role: callerRole(vdb, grants, maxRoleNameBytes) ?? grants.roles.join('+'),
    relations: context.relations.map((relation) => ({
      schema: relation.schema,
      name: relation.name,
      kind: relation.kind,
      columns: relation.columns.map(({ name, logicalType, nullable }) => {
        const key = columnKey(relation.schema, relation.name, name);
        return { name, nativeType: nativeTypes.get(key) ?? '', logicalType, nullable, ...(zoned.has(key) && { withTimeZone: true }) };
      }),
      primaryKey: [...relation.primaryKey],
      foreignKeys: relation.foreignKeys.map((key) => ({ ...key, columns: [...key.columns], referencedColumns: [...key.referencedColumns] })),
    })),
    functions: vdb.catalog.functions
      .filter((fn) => executable.has(`${fn.schema}\u0000${fn.name}`))
      .map((fn): VisibleFunction => ({
        schema: fn.schema, name: fn.name, kind: fn.kind, argumentTypes: [...fn.argumentTypes ?? []], ...(fn.returns !== undefined && { returns: fn.returns }),
      })),
  };
}

function columnKey(schema: string, relation: string, column: string): string {
  return `${schema}\u0000${relation}\u0000${column}`;
}
