import { lookupLogicalType, parseNativeType, type LogicalType, type LogicalTypeTable, type ValueCodec } from '../../core/plugin-api/adapter-kit.js';

/** SQL Server names beyond the standard ones (docs/logical-types.md). */
const MSSQL_TYPES: LogicalTypeTable = {
  'ntext': 'string',
  'xml': 'string',
  'sysname': 'string',
  'tinyint': 'integer',
  'money': 'decimal',
  'smallmoney': 'decimal',
  'bit': 'boolean',
  'datetime': 'timestamp',
  'datetime2': 'timestamp',
  'smalldatetime': 'timestamp',
  'datetimeoffset': 'timestamp',
  'uniqueidentifier': 'uuid',
  'image': 'binary',
  'rowversion': 'binary',
  // In SQL Server `timestamp` is the old name of rowversion, not a date.
  'timestamp': 'binary',
};

/** `nvarchar(max)` → string, `datetime2(7)` → timestamp, `uniqueidentifier` → uuid. */
export function mssqlLogicalType(nativeType: string): LogicalType {
  return lookupLogicalType(MSSQL_TYPES, parseNativeType(nativeType));
}

/** `datetimeoffset` holds an instant; `datetime`, `datetime2` and `smalldatetime` a wall-clock time. */
export function mssqlWithTimeZone(nativeType: string): boolean {
  return parseNativeType(nativeType).base === 'datetimeoffset';
}

/** The parts of a tedious column metadata this adapter reads. */
export interface TediousColumn {
  colName: string;
  /** The TDS type, e.g. `NVarChar`, or a nullable variant such as `IntN` whose size tells the type. */
  type: { name: string };
  dataLength?: number | undefined;
}

/** TDS nullable variants: the real type depends on the data length. */
const NULLABLE_VARIANTS: Readonly<Record<string, (length: number | undefined) => string>> = {
  intn: (length) => ({ 1: 'tinyint', 2: 'smallint', 8: 'bigint' } as Record<number, string>)[length ?? 4] ?? 'int',
  bitn: () => 'bit',
  decimaln: () => 'decimal',
  numericn: () => 'numeric',
  floatn: (length) => (length === 4 ? 'real' : 'float'),
  moneyn: () => 'money',
  datetimen: () => 'datetime',
};

/** How to encode a result column. tedious returns BIGINT as text and dates as Date (useUTC). */
export function mssqlCodec(column: TediousColumn): ValueCodec {
  const tdsName = column.type.name.toLowerCase();
  const typeName = NULLABLE_VARIANTS[tdsName]?.(column.dataLength) ?? tdsName;
  return { logicalType: mssqlLogicalType(typeName), withTimeZone: typeName === 'datetimeoffset' };
}
