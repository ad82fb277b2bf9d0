/**
 * The logical types every adapter maps its native types to (docs/logical-types.md). JSON responses encode them the
 * same way whatever the backend: see core/sql/value-encoding.ts.
 */
export const LOGICAL_TYPES = [
  'string', 'integer', 'bigint', 'decimal', 'float', 'boolean',
  'date', 'time', 'timestamp', 'json', 'uuid', 'binary',
] as const;
/** One of `LOGICAL_TYPES`: the type of a column whatever the database (docs/logical-types.md). */
export type LogicalType = (typeof LOGICAL_TYPES)[number];

/** A column of an introspected relation. */
export interface CatalogColumn {
  name: string;
  /** The type as the database names it, e.g. `character varying(120)` or `int unsigned`. */
  nativeType: string;
  logicalType: LogicalType;
  nullable: boolean;
  /**
   * For a `timestamp`: the native type holds an instant (`timestamptz`, MySQL `TIMESTAMP`, `datetimeoffset`,
   * Oracle `... TIME ZONE`), as its values' `Z` says (docs/logical-types.md); absent: it does not.
   */
  withTimeZone?: boolean;
}

/** A foreign key of an introspected relation. */
export interface CatalogForeignKey {
  name: string;
  columns: string[];
  referencedSchema: string;
  referencedRelation: string;
  referencedColumns: string[];
}

/** A table or view of an introspected schema. */
export interface CatalogRelation {
  schema: string;
  name: string;
  kind: 'table' | 'view';
  columns: CatalogColumn[];
  /** Column names of the primary key, in key order; empty for views and keyless tables. */
  primaryKey: string[];
  /** Each unique constraint or unique index (other than the primary key), as its column names. */
  uniqueKeys: string[][];
  foreignKeys: CatalogForeignKey[];
}

/** A user function of an introspected schema. */
export interface CatalogFunction {
  schema: string;
  name: string;
  kind: 'function' | 'aggregate' | 'procedure';
  /** Native return type, e.g. `numeric`; empty for procedures. */
  returnType: string;
  /** The logical type of `returnType`; absent for procedures. */
  returns?: LogicalType;
  /**
   * The logical types of its input arguments, in order (one entry per overload in the catalog); absent when
   * the dialect's introspection does not report them.
   */
  argumentTypes?: LogicalType[];
}

/** What one datasource holds, restricted to the schemas a VDB asked for. */
export interface Catalog {
  schemas: string[];
  relations: CatalogRelation[];
  functions: CatalogFunction[];
}
