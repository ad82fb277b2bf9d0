/**
 * The PostgreSQL types the SQL front door speaks (docs/sql.md#types): each logical type of
 * docs/logical-types.md has one type OID, every value is first written in PostgreSQL's text form, and a
 * client that asks for the binary form (JDBC does, for prepared statements it reuses) gets it converted
 * from that text by the column's OID.
 */
import type { LogicalType } from '../plugin-api/catalog.js';
import type { JsonValue } from '../plugin-api/sql-dialect.js';

/** The type OIDs of pg_type this door uses (PostgreSQL's fixed, built-in ones). */
export const PG_TYPE = {
  bool: 16, bytea: 17, name: 19, int8: 20, int2: 21, int4: 23, text: 25, oid: 26, json: 114, float4: 700, float8: 701,
  unknown: 705, bpchar: 1042, varchar: 1043, date: 1082, time: 1083, timestamp: 1114, timestamptz: 1184, numeric: 1700,
  uuid: 2950, jsonb: 3802,
} as const;

/** The OID of each logical type; a timestamp holding an instant is `timestamptz` instead (`typeOid`). */
const OID_OF: Readonly<Record<LogicalType, number>> = {
  string: PG_TYPE.text, integer: PG_TYPE.int4, bigint: PG_TYPE.int8, decimal: PG_TYPE.numeric, float: PG_TYPE.float8,
  boolean: PG_TYPE.bool, date: PG_TYPE.date, time: PG_TYPE.time, timestamp: PG_TYPE.timestamp, json: PG_TYPE.json,
  uuid: PG_TYPE.uuid, binary: PG_TYPE.bytea,
};

/** pg_type.typlen of the fixed-size types (RowDescription carries it); -1 for the others. */
const TYPE_SIZE: Readonly<Record<number, number>> = {
  [PG_TYPE.bool]: 1, [PG_TYPE.int2]: 2, [PG_TYPE.int4]: 4, [PG_TYPE.oid]: 4, [PG_TYPE.int8]: 8, [PG_TYPE.float4]: 4,
  [PG_TYPE.float8]: 8, [PG_TYPE.date]: 4, [PG_TYPE.time]: 8, [PG_TYPE.timestamp]: 8, [PG_TYPE.timestamptz]: 8,
  [PG_TYPE.uuid]: 16, [PG_TYPE.name]: 64,
};

/** The OID a result column is sent as: `timestamptz` for a timestamp holding an instant, sent in UTC (`+00`). */
export function typeOid(type: LogicalType, withTimeZone?: boolean): number {
  return withTimeZone === true && type === 'timestamp' ? PG_TYPE.timestamptz : OID_OF[type];
}

export function typeSize(oid: number): number {
  return TYPE_SIZE[oid] ?? -1;
}

/**
 * A value of a query result (JSON-encoded per docs/logical-types.md) in PostgreSQL's text output form. An
 * instant (`…Z`, sent as `timestamptz`) is written as PostgreSQL writes it in a session whose zone is UTC.
 */
export function textForm(value: JsonValue, type: LogicalType): string | null {
  if (value === null) return null;
  switch (type) {
    case 'boolean': return value === true || value === 't' || value === 'true' ? 't' : 'f';
    case 'json': return JSON.stringify(value);
    case 'binary': return typeof value === 'string' ? `\\x${Buffer.from(value, 'base64').toString('hex')}` : String(value);
    // `2024-01-31T10:11:12.5` becomes PostgreSQL's `2024-01-31 10:11:12.5`, `…Z` its `2024-01-31 10:11:12.5+00`
    case 'timestamp': return typeof value === 'string' ? value.replace('T', ' ').replace(/Z$/, '+00') : String(value);
    case 'float': return typeof value === 'number' ? floatText(value) : String(value);
    default: return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/**
 * A double as PostgreSQL's float8out writes it (extra_float_digits 1): the shortest digits that read back as the
 * same double, with an exponent (`1e-05`, `1e+15`: two digits at least) below 1e-4 and from 1e15, where
 * JavaScript's own text would write `0.00001` and `1000000000000000`.
 */
function floatText(value: number): string {
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  if (!Number.isFinite(value)) return String(value);
  const [digits = '', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 15) return String(value);
  return `${digits}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

const MICROS_PER_DAY = 86_400_000_000n;
/** PostgreSQL's binary dates and timestamps count from 2000-01-01. */
const EPOCH_2000_MS = Date.UTC(2000, 0, 1);
const INT64_MAX = 0x7fffffffffffffffn;
const INT64_MIN = -0x8000000000000000n;

/** The binary form of a value whose text form is `text`, for the column type `oid`. */
export function binaryForm(text: string, oid: number): Buffer {
  switch (oid) {
    case PG_TYPE.bool: return Buffer.from([text === 't' || text === 'true' ? 1 : 0]);
    case PG_TYPE.int2: return int(2, (buffer) => buffer.writeInt16BE(Number(text)));
    case PG_TYPE.int4: return int(4, (buffer) => buffer.writeInt32BE(Number(text)));
    case PG_TYPE.oid: return int(4, (buffer) => buffer.writeUInt32BE(Number(text)));
    case PG_TYPE.int8: return int(8, (buffer) => buffer.writeBigInt64BE(BigInt(text)));
    case PG_TYPE.float4: return int(4, (buffer) => buffer.writeFloatBE(Number(text)));
    case PG_TYPE.float8: return int(8, (buffer) => buffer.writeDoubleBE(Number(text)));
    case PG_TYPE.numeric: return numericBinary(text);
    case PG_TYPE.date: return int(4, (buffer) => buffer.writeInt32BE(dateDays(text)));
    case PG_TYPE.time: return int(8, (buffer) => buffer.writeBigInt64BE(timeMicros(text)));
    case PG_TYPE.timestamp:
    case PG_TYPE.timestamptz: return int(8, (buffer) => buffer.writeBigInt64BE(timestampMicros(text)));
    case PG_TYPE.uuid: return Buffer.from(text.replaceAll('-', ''), 'hex');
    case PG_TYPE.bytea: return Buffer.from(text.startsWith('\\x') ? text.slice(2) : text, 'hex');
    case PG_TYPE.jsonb: return Buffer.concat([Buffer.from([1]), Buffer.from(text)]);
    default: return Buffer.from(text);
  }
}

function int(size: number, write: (buffer: Buffer) => void): Buffer {
  const buffer = Buffer.alloc(size);
  write(buffer);
  return buffer;
}

function dateDays(text: string): number {
  if (text === 'infinity') return 0x7fffffff;
  if (text === '-infinity') return -0x80000000;
  const [year, month, day] = text.split('-').map(Number) as [number, number, number];
  return Math.round((Date.UTC(year, month - 1, day) - EPOCH_2000_MS) / 86_400_000);
}

/** `HH:MM:SS[.ffffff]` in microseconds. */
function timeMicros(text: string): bigint {
  const match = /^(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?/.exec(text);
  if (!match) throw new TypeError(`not a time: ${text}`);
  const [, hours, minutes, seconds, fraction = ''] = match;
  return (BigInt(hours as string) * 3600n + BigInt(minutes as string) * 60n + BigInt(seconds as string)) * 1_000_000n
    + BigInt(fraction.padEnd(6, '0'));
}

/** `YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM]]` in microseconds since 2000-01-01 UTC. */
function timestampMicros(text: string): bigint {
  if (text === 'infinity') return INT64_MAX;
  if (text === '-infinity') return INT64_MIN;
  const [date = '', rest = '00:00:00'] = text.split(' ');
  const zone = /([+-])(\d\d)(?::?(\d\d))?$/.exec(rest);
  const time = zone ? rest.slice(0, zone.index) : rest;
  const offsetMinutes = zone ? (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3] ?? 0)) : 0;
  return BigInt(dateDays(date)) * MICROS_PER_DAY + timeMicros(time) - BigInt(offsetMinutes) * 60_000_000n;
}

const NUMERIC_POSITIVE = 0x0000;
const NUMERIC_NEGATIVE = 0x4000;
const NUMERIC_NAN = 0xc000;
const NUMERIC_PINF = 0xd000;
const NUMERIC_NINF = 0xf000;

/** PostgreSQL's binary numeric: base-10000 digits with a weight, a sign and the display scale. */
function numericBinary(text: string): Buffer {
  const special = { NaN: NUMERIC_NAN, Infinity: NUMERIC_PINF, '-Infinity': NUMERIC_NINF }[text];
  if (special !== undefined) return numericBuffer([], 0, special, 0);
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = text.replace(/^[-+]/, '').split('.');
  const wholeDigits = whole.replace(/^0+/, '');
  const padded = wholeDigits.padStart(Math.ceil(wholeDigits.length / 4) * 4, '0') + fraction.padEnd(Math.ceil(fraction.length / 4) * 4, '0');
  const groups: number[] = [];
  for (let at = 0; at < padded.length; at += 4) groups.push(Number(padded.slice(at, at + 4)));
  let weight = Math.ceil(wholeDigits.length / 4) - 1;
  while (groups.length > 0 && groups[0] === 0) {
    groups.shift();
    weight--;
  }
  while (groups.length > 0 && groups[groups.length - 1] === 0) groups.pop();
  if (groups.length === 0) weight = 0;
  return numericBuffer(groups, weight, negative && groups.length > 0 ? NUMERIC_NEGATIVE : NUMERIC_POSITIVE, fraction.length);
}

function numericBuffer(groups: number[], weight: number, sign: number, scale: number): Buffer {
  const buffer = Buffer.alloc(8 + groups.length * 2);
  buffer.writeInt16BE(groups.length, 0);
  buffer.writeInt16BE(weight, 2);
  buffer.writeUInt16BE(sign, 4);
  buffer.writeInt16BE(scale, 6);
  groups.forEach((group, index) => buffer.writeInt16BE(group, 8 + index * 2));
  return buffer;
}

/**
 * A parameter a client bound in binary, as the value the datasource's driver is given: numbers and booleans
 * as such, 64-bit integers and numerics as their digits, temporal values as PostgreSQL's text.
 */
export function binaryParameter(value: Buffer, oid: number): unknown {
  switch (oid) {
    case PG_TYPE.bool: return value[0] === 1;
    case PG_TYPE.int2: return value.readInt16BE(0);
    case PG_TYPE.int4: return value.readInt32BE(0);
    case PG_TYPE.oid: return value.readUInt32BE(0);
    case PG_TYPE.int8: return value.readBigInt64BE(0).toString();
    case PG_TYPE.float4: return value.readFloatBE(0);
    case PG_TYPE.float8: return value.readDoubleBE(0);
    case PG_TYPE.numeric: return numericText(value);
    case PG_TYPE.bytea: return value;
    case PG_TYPE.uuid: {
      const hex = value.toString('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    case PG_TYPE.date: return dateText(value.readInt32BE(0));
    case PG_TYPE.time: return microsText(value.readBigInt64BE(0));
    case PG_TYPE.timestamp: return timestampText(value.readBigInt64BE(0));
    case PG_TYPE.timestamptz: return `${timestampText(value.readBigInt64BE(0))}+00`;
    case PG_TYPE.jsonb: return value.subarray(1).toString();
    default: return value.toString();
  }
}

function dateText(days: number): string {
  return new Date(EPOCH_2000_MS + days * 86_400_000).toISOString().slice(0, 10);
}

function microsText(micros: bigint): string {
  const seconds = micros / 1_000_000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  const clock = [seconds / 3600n, (seconds / 60n) % 60n, seconds % 60n].map((part) => part.toString().padStart(2, '0')).join(':');
  return fraction === '' ? clock : `${clock}.${fraction}`;
}

function timestampText(micros: bigint): string {
  const days = micros >= 0n ? micros / MICROS_PER_DAY : (micros - MICROS_PER_DAY + 1n) / MICROS_PER_DAY;
  return `${dateText(Number(days))} ${microsText(micros - days * MICROS_PER_DAY)}`;
}

function numericText(value: Buffer): string {
  const count = value.readInt16BE(0);
  const weight = value.readInt16BE(2);
  const sign = value.readUInt16BE(4);
  const scale = value.readInt16BE(6);
  if (sign === NUMERIC_NAN) return 'NaN';
  if (sign === NUMERIC_PINF) return 'Infinity';
  if (sign === NUMERIC_NINF) return '-Infinity';
  let whole = '';
  let fraction = '';
  for (let index = 0; index <= Math.max(weight, count - 1); index++) {
    const group = index < count ? value.readInt16BE(8 + index * 2).toString().padStart(4, '0') : '0000';
    if (index <= weight) whole += group;
    else fraction += group;
  }
  // digits before the first group (a negative weight) are zeros of the fraction
  if (weight < 0) fraction = '0000'.repeat(-weight - 1) + fraction;
  whole = whole.replace(/^0+/, '') || '0';
  fraction = fraction.padEnd(scale, '0').slice(0, scale);
  return `${sign === NUMERIC_NEGATIVE ? '-' : ''}${whole}${scale > 0 ? `.${fraction}` : ''}`;
}
