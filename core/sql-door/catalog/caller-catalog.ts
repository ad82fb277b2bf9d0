import { authorizedContext } from '../../authorization/authorized-context.js';
import type { CallerGrants } from '../../authorization/grants.js';
import type { VirtualDatabase } from '../../plugin-api/vdb.js';
import type { CatalogCaller } from './catalog-types.js';

/**
 * What a caller's catalog statements may show: the VDB's relations cut to the caller's grants, the same cut
 * the catalog routes and the Task API's authorized context apply (core/authorization/authorized-context.ts):
 * no relation outside the VDB, no column the grants do not let the caller select, a primary key only when
 * all its columns are visible, a foreign key only when the caller sees its columns at both ends.
 */
export function callerCatalog(vdb: VirtualDatabase, grants: CallerGrants): CatalogCaller {
  const context = authorizedContext(vdb, grants);
  return {
    vdb: vdb.name,
    version: vdb.version,
    // grant sets are interned per matched role set (grants.ts): the role names name the set
    grantsKey: grants.access === 'restricted' ? `roles:${grants.roles.join('\n')}` : grants.access,
    relations: context.relations.map((relation) => ({
      schema: relation.schema,
      name: relation.name,
      kind: relation.kind,
      columns: relation.columns.map(({ name, logicalType, nullable }) => ({ name, logicalType, nullable })),
      primaryKey: [...relation.primaryKey],
      foreignKeys: relation.foreignKeys.map((key) => ({ ...key, columns: [...key.columns], referencedColumns: [...key.referencedColumns] })),
    })),
  };
}
