import { lookupLogicalType, parseNativeType, type LogicalType, type LogicalTypeTable, type ValueCodec } from '../../core/plugin-api/adapter-kit.js';

/** Oracle names beyond the standard ones (docs/logical-types.md). */
const ORACLE_TYPES: LogicalTypeTable = {
  'varchar2': 'string',
  'nvarchar2': 'string',
  'nclob': 'string',
  'long': 'string',
  'rowid': 'string',
  'urowid': 'string',
  'binary_float': 'float',
  'binary_double': 'float',
  // An Oracle DATE has a time of day.
  'date': 'timestamp',
  'timestamp with local time zone': 'timestamp',
  'raw': 'binary',
  'long raw': 'binary',
  'bfile': 'binary',
};

/**
 * NUMBER by precision and scale: `NUMBER(p,0)` is an integer (p ≤ 9) or a bigint (wider, or `NUMBER(*,0)`,
 * which is what `INTEGER` declares); `NUMBER` and `NUMBER(p,s)` are decimals. `FLOAT(b)` is a float.
 */
function numberType(precision: number | undefined, scale: number | undefined): LogicalType {
  if (scale !== 0) return 'decimal';
  return precision !== undefined && precision > 0 && precision <= 9 ? 'integer' : 'bigint';
}

export function oracleLogicalType(nativeType: string): LogicalType {
  const parts = parseNativeType(nativeType);
  if (parts.base === 'number') return parts.args.length === 0 ? 'decimal' : numberType(parts.args[0], parts.args[1] ?? 0);
  return lookupLogicalType(ORACLE_TYPES, parts);
}

/** `TIMESTAMP(6) WITH TIME ZONE` and `... WITH LOCAL TIME ZONE` hold an instant. */
export function oracleWithTimeZone(nativeType: string): boolean {
  const { base } = parseNativeType(nativeType);
  return base.startsWith('timestamp') && base.endsWith('time zone');
}

/** The parts of an oracledb result column (`result.metaData[i]`) this adapter reads. */
export interface OracleColumn {
  name: string;
  /** e.g. `NUMBER`, `VARCHAR2`, `TIMESTAMP WITH TIME ZONE`. */
  dbTypeName?: string;
  precision?: number;
  scale?: number;
}

/** Oracle describes an unconstrained NUMBER (or an expression) with scale -127 and a FLOAT with precision > 0. */
const UNCONSTRAINED_SCALE = -127;

export function oracleCodec(column: OracleColumn): ValueCodec {
  const typeName = (column.dbTypeName ?? '').toUpperCase();
  if (typeName === 'NUMBER') {
    if (column.scale === UNCONSTRAINED_SCALE) return { logicalType: (column.precision ?? 0) > 0 ? 'float' : 'decimal' };
    return { logicalType: numberType(column.precision, column.scale) };
  }
  // WITH LOCAL TIME ZONE is shown in the session zone, which is UTC (ORACLE_SESSION_SQL, oracle-statement.ts).
  const withTimeZone = typeName.startsWith('TIMESTAMP') && typeName.endsWith('TIME ZONE');
  return { logicalType: oracleLogicalType(typeName), withTimeZone };
}
