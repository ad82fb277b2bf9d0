import type { LogicalType } from '../plugin-api/catalog.js';

/**
 * Shared pieces of the native type → logical type mapping. Each dialect keeps its own table
 * (`adapters/<id>/<id>-types.ts`) on top of `STANDARD_TYPES`, so that a name several databases share
 * (`varchar`, `integer`, `numeric`, `date`, ...) maps the same way everywhere. Tables: docs/logical-types.md.
 */

/** A native type name taken apart: `NUMERIC(18, 2)` → base `numeric`, args [18, 2]. */
export interface NativeTypeParts {
  /** Lowercased name without its parenthesized arguments, spaces collapsed: `timestamp with time zone`, `int unsigned`. */
  base: string;
  /** The numbers of the first parenthesized group; `*` (Oracle's `NUMBER(*,0)`) is `undefined`. */
  args: (number | undefined)[];
  /** True for PostgreSQL array types (`integer[]`). */
  array: boolean;
}

/** The parts of a native type name: base name, arguments, array. */
export function parseNativeType(nativeType: string): NativeTypeParts {
  let text = nativeType.trim().toLowerCase();
  const array = text.endsWith('[]');
  text = text.replace(/(\[\])+$/, '');
  const group = /\(([^)]*)\)/.exec(text);
  const args = group
    ? (group[1] ?? '').split(',').map((arg) => {
      const n = Number(arg.trim());
      return Number.isFinite(n) && arg.trim() !== '' ? n : undefined;
    })
    : [];
  const base = text.replace(/\([^)]*\)/g, ' ').replace(/\s+/g, ' ').trim();
  return { base, args, array };
}

/** A dialect's table from base type name to logical type. */
export type LogicalTypeTable = Readonly<Record<string, LogicalType>>;

/** Names of the SQL standard (and their common spellings) that mean the same thing in every dialect. */
export const STANDARD_TYPES: LogicalTypeTable = {
  'char': 'string',
  'character': 'string',
  'varchar': 'string',
  'character varying': 'string',
  'nchar': 'string',
  'nvarchar': 'string',
  'national character': 'string',
  'national character varying': 'string',
  'text': 'string',
  'clob': 'string',
  'smallint': 'integer',
  'int': 'integer',
  'integer': 'integer',
  'bigint': 'bigint',
  'numeric': 'decimal',
  'decimal': 'decimal',
  'dec': 'decimal',
  'real': 'float',
  'float': 'float',
  'double': 'float',
  'double precision': 'float',
  'boolean': 'boolean',
  'bool': 'boolean',
  'date': 'date',
  'time': 'time',
  'time without time zone': 'time',
  'timestamp': 'timestamp',
  'timestamp without time zone': 'timestamp',
  'timestamp with time zone': 'timestamp',
  'json': 'json',
  'uuid': 'uuid',
  'blob': 'binary',
  'binary': 'binary',
  'varbinary': 'binary',
  'binary varying': 'binary',
};

/** Looks `parts.base` up in the dialect's table, then in the standard one; anything unknown is a string. */
export function lookupLogicalType(table: LogicalTypeTable, parts: NativeTypeParts): LogicalType {
  return table[parts.base] ?? STANDARD_TYPES[parts.base] ?? 'string';
}
