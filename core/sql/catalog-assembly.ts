import type { Catalog, CatalogFunction, CatalogRelation, LogicalType } from '../plugin-api/catalog.js';
import type { BoundSql, RowReader } from './knex-datasource.js';

/**
 * Builds a Catalog from the rows of five introspection queries. Every dialect writes its queries against its
 * own catalog views but returns these column aliases, so the assembly is written once.
 */
export interface IntrospectionQueries {
  /** schema_name, relation_name, relation_kind ('table' | 'view') */
  relations: BoundSql;
  /** schema_name, relation_name, column_name, native_type, base_type (optional: type to map, e.g. a domain's), is_nullable, ordinal */
  columns: BoundSql;
  /** schema_name, relation_name, constraint_name, constraint_type ('p' | 'u'), column_name, position */
  keys: BoundSql;
  /** schema_name, relation_name, constraint_name, column_name, position, ref_schema, ref_relation, ref_column */
  foreignKeys: BoundSql;
  /**
   * schema_name, function_name, function_kind ('function' | 'aggregate' | 'procedure'), return_type, and
   * optionally argument_types: the input arguments' native types joined by `;` (one row per overload)
   */
  functions: BoundSql;
}

/** How a dialect reads native type names: the logical type, and whether a timestamp type holds an instant. */
export interface NativeTypeReader {
  logicalType(nativeType: string): LogicalType;
  /** True for a timestamp type holding an instant (docs/logical-types.md); absent: none does. */
  withTimeZone?(nativeType: string): boolean;
}

const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
const num = (value: unknown): number => Number(value);
/** Drivers report truth as true, 1, '1', 'YES' or 'Y'. */
const truthy = (value: unknown): boolean => value === true || value === 1 || ['1', 'yes', 'y', 'true', 't'].includes(text(value).toLowerCase());
const key = (schema: unknown, relation: unknown) => `${text(schema)}\u0000${text(relation)}`;

/** Assembles a catalog from the rows of introspection queries. */
export async function readCatalog(
  schemas: readonly string[],
  queries: IntrospectionQueries,
  read: RowReader,
  types: NativeTypeReader,
): Promise<Catalog> {
  if (schemas.length === 0) return { schemas: [], relations: [], functions: [] };
  // Sequential on purpose: a single-connection dialect would serialize them anyway, and a pool is spared.
  const relationRows = await read(queries.relations);
  const columnRows = await read(queries.columns);
  const keyRows = await read(queries.keys);
  const foreignKeyRows = await read(queries.foreignKeys);
  const functionRows = await read(queries.functions);

  const relations = new Map<string, CatalogRelation>();
  for (const row of relationRows) {
    relations.set(key(row['schema_name'], row['relation_name']), {
      schema: text(row['schema_name']),
      name: text(row['relation_name']),
      kind: text(row['relation_kind']) === 'view' ? 'view' : 'table',
      columns: [],
      primaryKey: [],
      uniqueKeys: [],
      foreignKeys: [],
    });
  }

  const byPosition = (field: string) => (a: Record<string, unknown>, b: Record<string, unknown>) => num(a[field]) - num(b[field]);
  for (const row of [...columnRows].sort(byPosition('ordinal'))) {
    const nativeType = text(row['native_type']);
    const baseType = text(row['base_type']);
    const mapped = baseType === '' ? nativeType : baseType;
    const logicalType = types.logicalType(mapped);
    relations.get(key(row['schema_name'], row['relation_name']))?.columns.push({
      name: text(row['column_name']),
      nativeType,
      logicalType,
      nullable: truthy(row['is_nullable']),
      ...(logicalType === 'timestamp' && types.withTimeZone?.(mapped) === true && { withTimeZone: true }),
    });
  }

  const uniqueKeys = new Map<string, { relation: CatalogRelation; columns: string[] }>();
  for (const row of [...keyRows].sort(byPosition('position'))) {
    const relation = relations.get(key(row['schema_name'], row['relation_name']));
    if (!relation) continue;
    if (text(row['constraint_type']).toLowerCase() === 'p') {
      relation.primaryKey.push(text(row['column_name']));
      continue;
    }
    const id = `${key(row['schema_name'], row['relation_name'])}\u0000${text(row['constraint_name'])}`;
    const entry = uniqueKeys.get(id) ?? { relation, columns: [] };
    entry.columns.push(text(row['column_name']));
    uniqueKeys.set(id, entry);
  }
  for (const [, { relation, columns }] of [...uniqueKeys].sort(([a], [b]) => a.localeCompare(b))) {
    relation.uniqueKeys.push(columns);
  }

  const foreignKeys = new Map<string, CatalogRelation['foreignKeys'][number]>();
  for (const row of [...foreignKeyRows].sort(byPosition('position'))) {
    const relation = relations.get(key(row['schema_name'], row['relation_name']));
    if (!relation) continue;
    const id = `${key(row['schema_name'], row['relation_name'])}\u0000${text(row['constraint_name'])}`;
    let foreignKey = foreignKeys.get(id);
    if (!foreignKey) {
      foreignKey = {
        name: text(row['constraint_name']),
        columns: [],
        referencedSchema: text(row['ref_schema']),
        referencedRelation: text(row['ref_relation']),
        referencedColumns: [],
      };
      foreignKeys.set(id, foreignKey);
      relation.foreignKeys.push(foreignKey);
    }
    foreignKey.columns.push(text(row['column_name']));
    foreignKey.referencedColumns.push(text(row['ref_column']));
  }

  const functions: CatalogFunction[] = functionRows.map((row) => {
    const kind = text(row['function_kind']);
    const returnType = text(row['return_type']);
    const argumentTypes = row['argument_types'];
    return {
      schema: text(row['schema_name']),
      name: text(row['function_name']),
      kind: kind === 'aggregate' || kind === 'procedure' ? kind : 'function',
      returnType,
      ...(returnType !== '' && { returns: types.logicalType(returnType) }),
      ...(argumentTypes !== undefined && { argumentTypes: text(argumentTypes).split(';').filter((type) => type !== '').map((type) => types.logicalType(type)) }),
    };
  });

  const order = (a: { schema: string; name: string }, b: { schema: string; name: string }) =>
    a.schema.localeCompare(b.schema) || a.name.localeCompare(b.name);
  // Only schemas that hold something are reported, so a misspelt schema shows up as missing.
  const present = new Set([...relations.values(), ...functions].map((item) => item.schema));
  return {
    schemas: schemas.filter((schema) => present.has(schema)),
    relations: [...relations.values()].sort(order),
    functions: functions.sort(order),
  };
}
