/**
 * Catalog introspection for the SQL front door (docs/sql-catalog.md): the statements psql, JDBC drivers and
 * BI tools send to `pg_catalog` and `information_schema` are answered from a mirror holding empty shells of
 * exactly the relations and columns the caller may see, whatever the VDB's backend.
 */
export type { CatalogAnswer, CatalogCaller, CatalogDescription, CatalogLimits, CatalogResponder, VisibleFunction, VisibleRelation } from './catalog-types.js';
export { CatalogQueryError } from './catalog-query-error.js';
export { callerCatalog } from './caller-catalog.js';
export { createCatalogResponder, type CatalogResponderOptions } from './catalog-responder.js';
