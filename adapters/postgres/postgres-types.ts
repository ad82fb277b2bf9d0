import pg from 'pg';
import { lookupLogicalType, parseNativeType, type LogicalType, type LogicalTypeTable, type ValueCodec } from '../../core/plugin-api/adapter-kit.js';

/** PostgreSQL names beyond the standard ones (docs/logical-types.md). PGlite shares this table. */
const POSTGRES_TYPES: LogicalTypeTable = {
  'int2': 'integer',
  'int4': 'integer',
  'smallserial': 'integer',
  'serial': 'integer',
  'serial2': 'integer',
  'serial4': 'integer',
  'oid': 'integer',
  'int8': 'bigint',
  'bigserial': 'bigint',
  'serial8': 'bigint',
  'float4': 'float',
  'float8': 'float',
  'bpchar': 'string',
  'name': 'string',
  'citext': 'string',
  'timestamptz': 'timestamp',
  'jsonb': 'json',
  'bytea': 'binary',
  // Not portable: kept as PostgreSQL's text.
  'timetz': 'string',
  'time with time zone': 'string',
  'interval': 'string',
  'money': 'string',
  'bit': 'string',
  'bit varying': 'string',
  'varbit': 'string',
};

/** `character varying(120)` → string, `integer[]` → json (arrays are JSON arrays). */
export function postgresLogicalType(nativeType: string): LogicalType {
  const parts = parseNativeType(nativeType);
  return parts.array ? 'json' : lookupLogicalType(POSTGRES_TYPES, parts);
}

/** `timestamptz`, `timestamp(3) with time zone`: the native timestamp types holding an instant. */
export function postgresWithTimeZone(nativeType: string): boolean {
  const { base, array } = parseNativeType(nativeType);
  return !array && (base === 'timestamptz' || base === 'timestamp with time zone');
}

/** Built-in type OIDs, as result rows report them, with their type names. */
const OID_NAMES: Readonly<Record<number, string>> = {
  16: 'bool', 17: 'bytea', 18: 'char', 19: 'name', 20: 'int8', 21: 'int2', 23: 'int4', 25: 'text', 26: 'oid',
  114: 'json', 700: 'float4', 701: 'float8', 790: 'money', 1042: 'bpchar', 1043: 'varchar', 1082: 'date',
  1083: 'time', 1114: 'timestamp', 1184: 'timestamptz', 1186: 'interval', 1266: 'timetz', 1560: 'bit',
  1562: 'varbit', 1700: 'numeric', 2950: 'uuid', 3802: 'jsonb',
};
const TIMESTAMPTZ = 1184;

/** Array OIDs of the built-in types: encoded as JSON arrays. */
const ARRAY_OIDS = new Set([
  199, 1000, 1001, 1002, 1003, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1028, 1115, 1182, 1183, 1185,
  1187, 1231, 1270, 2951, 3807,
]);

/** Codecs by OID: every column of every result asks, and the answer never changes. */
const codecs = new Map<number, ValueCodec>();

/** How to encode a result column of this type OID; an unknown OID (enum, extension type) is a string. */
export function postgresCodec(oid: number): ValueCodec {
  let codec = codecs.get(oid);
  if (!codec) codecs.set(oid, (codec = codecFor(oid)));
  return codec;
}

function codecFor(oid: number): ValueCodec {
  if (ARRAY_OIDS.has(oid)) return { logicalType: 'json' };
  const name = OID_NAMES[oid];
  if (name === undefined) return { logicalType: 'string' };
  return { logicalType: postgresLogicalType(name), withTimeZone: oid === TIMESTAMPTZ };
}

/**
 * Types whose default parsing is lossy or depends on the process time zone (Date objects, BigInt), and JSON
 * (parsed once, by value-encoding, as for every driver: a JSON string holding JSON text must not be parsed
 * twice): they come back as PostgreSQL's text. Everything else keeps the driver's lossless parsing
 * (int4 → number, bool, bytea → bytes).
 */
export const TEXT_OIDS: readonly number[] = [20, 114, 1082, 1083, 1114, 1184, 1186, 1266, 1700, 3802];
/** Arrays of those types: parsed as arrays of text. */
const TEXT_ARRAY_OIDS: readonly number[] = [1016, 1182, 1183, 1115, 1185, 1187, 1270, 1231];
const TEXT_ARRAY = 1009;

const asText = (value: string) => value;

/** The `types` of a pg connection: node-postgres' parsers with the overrides above. */
export const postgresTypeParsers = {
  getTypeParser(oid: number, format: string): (value: string) => unknown {
    if (TEXT_OIDS.includes(oid)) return asText;
    const source = TEXT_ARRAY_OIDS.includes(oid) ? TEXT_ARRAY : oid;
    return pg.types.getTypeParser(source as PgTypeId, format === 'binary' ? 'binary' : 'text') as (value: string) => unknown;
  },
};
type PgTypeId = Parameters<typeof pg.types.getTypeParser>[0];
