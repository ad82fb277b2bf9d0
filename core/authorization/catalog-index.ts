/** Lookups over a VDB catalog for the authorizer, built once per catalog (catalogs are fixed after startup). */
import type { CatalogFunction } from '../plugin-api/catalog.js';
import type { SqlFamily } from '../plugin-api/sql-dialect.js';
import type { VdbCatalog, VdbRelation } from '../vdb/vdb-types.js';

export interface CatalogIndex {
  schemas: ReadonlySet<string>;
  /** The relation of exactly this schema and name: names are matched as the catalog spells them. */
  relation(schema: string, name: string): VdbRelation | undefined;
  /** The functions of that schema and name (overloads share one name); names compare like columns. */
  functions(schema: string, name: string): CatalogFunction[];
  /** The functions of that name in any VDB schema, for unqualified calls the search path could resolve. */
  functionsNamed(name: string): CatalogFunction[];
  /** Every column name of the relation, in catalog order. */
  columnNames(relation: VdbRelation): string[];
  /** The catalog spellings of `column` in the relation under the family's rules (PostgreSQL: exact). */
  matchColumn(relation: VdbRelation, column: string): string[];
}

const indexes = new WeakMap<VdbCatalog, Map<SqlFamily, CatalogIndex>>();

export function catalogIndex(catalog: VdbCatalog, family: SqlFamily): CatalogIndex {
  let byFamily = indexes.get(catalog);
  if (!byFamily) indexes.set(catalog, (byFamily = new Map()));
  let index = byFamily.get(family);
  if (!index) byFamily.set(family, (index = buildIndex(catalog, family)));
  return index;
}

function buildIndex(catalog: VdbCatalog, family: SqlFamily): CatalogIndex {
  // PostgreSQL folds unquoted names itself and compares exactly; MySQL, SQL Server (default collations) and
  // Oracle compare column and function names without case, so a name may match several spellings: all count.
  const nameKey = family === 'postgres' ? (name: string) => name : (name: string) => name.toLowerCase();
  const relations = new Map<string, VdbRelation>();
  const columnsByRelation = new Map<VdbRelation, { names: string[]; byKey: Map<string, string[]> }>();
  for (const relation of catalog.relations) {
    relations.set(key(relation.schema, relation.name), relation);
    const byKey = new Map<string, string[]>();
    for (const column of relation.columns) {
      const spellings = byKey.get(nameKey(column.name)) ?? [];
      byKey.set(nameKey(column.name), [...spellings, column.name]);
    }
    columnsByRelation.set(relation, { names: relation.columns.map((column) => column.name), byKey });
  }
  const functions = new Map<string, CatalogFunction[]>();
  const functionsByName = new Map<string, CatalogFunction[]>();
  for (const fn of catalog.functions) {
    const qualified = key(fn.schema, nameKey(fn.name));
    functions.set(qualified, [...(functions.get(qualified) ?? []), fn]);
    functionsByName.set(nameKey(fn.name), [...(functionsByName.get(nameKey(fn.name)) ?? []), fn]);
  }
  const schemas = new Set([...catalog.schemas, ...catalog.relations.map((relation) => relation.schema)]);
  return {
    schemas,
    relation: (schema, name) => relations.get(key(schema, name)),
    functions: (schema, name) => functions.get(key(schema, nameKey(name))) ?? [],
    functionsNamed: (name) => functionsByName.get(nameKey(name)) ?? [],
    columnNames: (relation) => columnsByRelation.get(relation)?.names ?? [],
    matchColumn: (relation, column) => columnsByRelation.get(relation)?.byKey.get(nameKey(column)) ?? [],
  };
}

function key(schema: string, name: string): string {
  return `${schema}\u0000${name}`;
}
