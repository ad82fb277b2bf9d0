import { lookupLogicalType, parseNativeType, type LogicalType, type LogicalTypeTable, type ValueCodec } from '../../core/plugin-api/adapter-kit.js';

/** MySQL and MariaDB names beyond the standard ones (docs/logical-types.md). */
const MYSQL_TYPES: LogicalTypeTable = {
  'tinytext': 'string',
  'mediumtext': 'string',
  'longtext': 'string',
  'enum': 'string',
  'set': 'string',
  'tinyint': 'integer',
  'mediumint': 'integer',
  'year': 'integer',
  'fixed': 'decimal',
  'datetime': 'timestamp',
  'tinyblob': 'binary',
  'mediumblob': 'binary',
  'longblob': 'binary',
};

/**
 * `int(11) unsigned` → integer, `tinyint(1)` → boolean (MySQL's boolean), `bit(1)` → boolean, wider `bit(n)`
 * → binary. `unsigned` and `zerofill` do not change the logical type: an unsigned int still fits a JSON
 * number, and a bigint is a string either way.
 */
export function mysqlLogicalType(nativeType: string): LogicalType {
  const parts = parseNativeType(nativeType);
  const base = parts.base.replace(/ (unsigned|signed|zerofill)\b/g, '');
  if (base === 'tinyint' && parts.args[0] === 1) return 'boolean';
  if (base === 'bit') return (parts.args[0] ?? 1) === 1 ? 'boolean' : 'binary';
  return lookupLogicalType(MYSQL_TYPES, { ...parts, base });
}

/** MySQL's `TIMESTAMP` holds an instant (stored in UTC); `DATETIME` a wall-clock time. */
export function mysqlWithTimeZone(nativeType: string): boolean {
  return parseNativeType(nativeType).base === 'timestamp';
}

/** The parts of a mysql2 column definition this adapter reads. */
export interface MysqlField {
  name: string;
  columnType?: number;
  columnLength?: number;
  /** 63 is the `binary` character set: BLOB and VARBINARY rather than TEXT and VARCHAR. */
  characterSet?: number;
  /** MariaDB extended metadata: `json` for a JSON column (stored as LONGTEXT). */
  extendedFormat?: string;
  /** MariaDB extended metadata: `uuid`, `inet6`, ... */
  extendedTypeName?: string;
}

const BINARY_CHARSET = 63;

/** How to encode a result column, from the protocol's column type codes (mysql2's `Types`). */
export function mysqlCodec(field: MysqlField): ValueCodec {
  if (field.extendedFormat === 'json') return { logicalType: 'json' };
  if (field.extendedTypeName === 'uuid') return { logicalType: 'uuid' };
  switch (field.columnType) {
    case 1: return { logicalType: field.columnLength === 1 ? 'boolean' : 'integer' }; // TINY; tinyint(1)
    case 2: case 3: case 9: case 13: return { logicalType: 'integer' }; // SHORT, LONG, INT24, YEAR
    case 8: return { logicalType: 'bigint' }; // LONGLONG
    case 0: case 246: return { logicalType: 'decimal' }; // DECIMAL, NEWDECIMAL
    case 4: case 5: return { logicalType: 'float' }; // FLOAT, DOUBLE
    case 10: case 14: return { logicalType: 'date' }; // DATE, NEWDATE
    case 11: return { logicalType: 'time' };
    // TIMESTAMP holds an instant; the session runs in UTC, so its text is UTC.
    case 7: return { logicalType: 'timestamp', withTimeZone: true };
    case 12: return { logicalType: 'timestamp' }; // DATETIME
    case 245: return { logicalType: 'json' };
    case 16: return { logicalType: field.columnLength === 1 ? 'boolean' : 'binary' }; // BIT
    case 255: return { logicalType: 'binary' }; // GEOMETRY
    case 15: case 249: case 250: case 251: case 252: case 253: case 254: // VARCHAR, BLOBs, VAR_STRING, STRING
      return { logicalType: field.characterSet === BINARY_CHARSET ? 'binary' : 'string' };
    default: return { logicalType: 'string' };
  }
}
