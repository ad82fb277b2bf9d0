/** Lookups over a VDB catalog for the authorizer, built once per catalog (catalogs are fixed after startup). */
import type { CatalogFunction } from '../plugin-api/catalog.js';
import type { DialectSyntax } from '../plugin-api/sql-syntax.js';
import type { VdbCatalog, VdbRelation } from '../plugin-api/vdb.js';

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
  /** The catalog spellings of `column` in the relation under the dialect's rules (PostgreSQL: exact). */
  matchColumn(relation: VdbRelation, column: string): string[];
}

/** Per catalog, then by how names compare: the index depends on nothing else of the dialect. */
const indexes = new WeakMap<VdbCatalog, Map<boolean, CatalogIndex>>();

export function catalogIndex(catalog: VdbCatalog, dialect: Pick<DialectSyntax, 'caseInsensitiveNames'>): CatalogIndex {
  let byCase = indexes.get(catalog);
  if (!byCase) indexes.set(catalog, (byCase = new Map()));
  let index = byCase.get(dialect.caseInsensitiveNames);
  if (!index) byCase.set(dialect.caseInsensitiveNames, (index = buildIndex(catalog, dialect.caseInsensitiveNames)));
  return index;
}

function buildIndex(catalog: VdbCatalog, caseInsensitive: boolean): CatalogIndex {
  // Where column and function names compare without case (MySQL, SQL Server default collations), a name may
  // match several spellings: all count.
  const nameKey = caseInsensitive ? (name: string) => name.toLowerCase() : (name: string) => name;
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
