import type { LogicalType } from '../plugin-api/catalog.js';
import type { JsonValue } from '../plugin-api/sql-dialect.js';

/**
 * The one mapping of database values to JSON, per logical type (docs/logical-types.md). Every adapter configures its
 * driver to hand values over without lossy parsing (temporal values and big numbers as text) and then
 * encodes them here, so the same logical value gives the same JSON on every backend:
 *
 * | logical   | JSON                                                                                    |
 * |-----------|-----------------------------------------------------------------------------------------|
 * | string    | string                                                                                  |
 * | integer   | number                                                                                  |
 * | bigint    | string of digits, e.g. `"9007199254740993"`                                             |
 * | decimal   | plain decimal string, no exponent, no trailing fractional zeros: `12.50` → `"12.5"`     |
 * | float     | number; NaN and ±Infinity, which JSON cannot hold, as `"NaN"`, `"Infinity"`, `"-Infinity"` |
 * | boolean   | true / false                                                                            |
 * | date      | `"YYYY-MM-DD"`                                                                          |
 * | time      | `"HH:MM:SS"` plus `.f` fraction digits when not zero, trailing zeros dropped            |
 * | timestamp | `"YYYY-MM-DDTHH:MM:SS[.f]"` without a zone; with `Z` (converted to UTC) when the native   |
 * |           | type holds an instant (timestamptz, datetimeoffset, MySQL TIMESTAMP, Oracle ... TIME ZONE) |
 * | json      | the parsed value                                                                        |
 * | uuid      | lowercase string                                                                        |
 * | binary    | base64 string                                                                           |
 *
 * A value the format cannot express (PostgreSQL `infinity`, a BC date, a MySQL time over 24 h) passes
 * through as the database's own text. A `Date` from a driver carries the wall-clock time in its UTC fields
 * (tedious with `useUTC`), or the instant itself for a zoned type.
 */

/** How to encode one column's values. */
export interface ValueCodec {
  logicalType: LogicalType;
  /** For `timestamp`: the native type holds an instant, so the value is written in UTC with `Z`. */
  withTimeZone?: boolean;
}

/** A result column as a driver described it, mapped to its codec. */
export interface ColumnCodec extends ValueCodec {
  name: string;
}

export function encodeValue(value: unknown, codec: ValueCodec): JsonValue {
  if (value === null || value === undefined) return null;
  switch (codec.logicalType) {
    case 'string': return encodeString(value);
    case 'integer': return encodeInteger(value);
    case 'bigint': return typeof value === 'string' ? value : String(value);
    case 'decimal': return canonicalDecimal(typeof value === 'number' ? plainNumber(value) : String(value));
    case 'float': return encodeFloat(value);
    case 'boolean': return encodeBoolean(value);
    case 'date': return encodeDate(value);
    case 'time': return encodeTime(value);
    case 'timestamp': return encodeTimestamp(value, codec.withTimeZone === true);
    case 'json': return encodeJson(value);
    case 'uuid': return String(value).toLowerCase();
    case 'binary': return encodeBinary(value);
  }
}

function encodeString(value: unknown): JsonValue {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (typeof value === 'object') return JSON.stringify(toJson(value));
  return String(value);
}

function encodeInteger(value: unknown): JsonValue {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const n = Number(value);
  // Out of the double range or not a number: keep the exact text rather than a wrong number.
  return Number.isSafeInteger(n) ? n : String(value);
}

function encodeFloat(value: unknown): JsonValue {
  const n = typeof value === 'number' ? value : Number(value);
  if (Number.isFinite(n)) return n;
  if (Number.isNaN(n)) return typeof value === 'number' || /^nan$/i.test(String(value)) ? 'NaN' : String(value);
  return n > 0 ? 'Infinity' : '-Infinity';
}

const TRUE_TEXT = new Set(['t', 'true', '1', 'y', 'yes', 'on']);

function encodeBoolean(value: unknown): JsonValue {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return value !== 0 && value !== 0n;
  // MySQL BIT(1) arrives as a one-byte buffer.
  if (value instanceof Uint8Array) return value.some((byte) => byte !== 0);
  return TRUE_TEXT.has(String(value).trim().toLowerCase());
}

/** `-12.3400e2` → `-1234`, `.5` → `0.5`, `007` → `7`; text that is not a number (`NaN`) is returned as is. */
export function canonicalDecimal(text: string): string {
  const match = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?\s*$/i.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return text;
  const sign = match[1] === '-' ? '-' : '';
  let digits = (match[2] ?? '') + (match[3] ?? '');
  let point = (match[2] ?? '').length + Number(match[4] ?? 0);
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const integer = digits.slice(0, point).replace(/^0+/, '') || '0';
  const fraction = digits.slice(point).replace(/0+$/, '');
  const body = fraction === '' ? integer : `${integer}.${fraction}`;
  return body === '0' ? '0' : sign + body;
}

/** A JS number as decimal text without an exponent (`1e21` → `1000000000000000000000`). */
function plainNumber(n: number): string {
  return Number.isFinite(n) ? canonicalDecimal(n.toString()) : String(n);
}

const DATE_TEXT = /^(\d{4,})-(\d{2})-(\d{2})/;
const TIME_TEXT = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?$/;
const TIMESTAMP_TEXT =
  /^(\d{4,})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$/i;

function fractionOf(digits: string | undefined): string {
  const trimmed = (digits ?? '').replace(/0+$/, '');
  return trimmed === '' ? '' : `.${trimmed}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function encodeDate(value: unknown): JsonValue {
  if (value instanceof Date) return `${pad(value.getUTCFullYear(), 4)}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())}`;
  const text = String(value);
  const match = DATE_TEXT.exec(text);
  return match && !/ BC$/.test(text) ? `${match[1]}-${match[2]}-${match[3]}` : text;
}

function encodeTime(value: unknown): JsonValue {
  if (value instanceof Date) {
    return `${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())}`
      + fractionOf(pad(value.getUTCMilliseconds(), 3));
  }
  const text = String(value).trim();
  const match = TIME_TEXT.exec(text);
  if (!match) return text;
  return `${match[1]}:${match[2]}:${match[3] ?? '00'}${fractionOf(match[4])}`;
}

function encodeTimestamp(value: unknown, withTimeZone: boolean): JsonValue {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return null;
    return isoFromUtcDate(value, pad(value.getUTCMilliseconds(), 3)) + (withTimeZone ? 'Z' : '');
  }
  const text = String(value).trim();
  const match = TIMESTAMP_TEXT.exec(text);
  if (!match) return text;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction, offset] = match;
  if (!withTimeZone) return `${year}-${month}-${day}T${hour}:${minute}:${second}${fractionOf(fraction)}`;
  // Shift whole seconds by the offset; the fraction is unaffected and keeps all its digits (microseconds).
  const utc = new Date(0);
  utc.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  utc.setUTCHours(Number(hour), Number(minute), Number(second) - offsetSeconds(offset), 0);
  return `${isoFromUtcDate(utc, fraction)}Z`;
}

/** `+05:30` → 19800; absent or `Z` → 0 (a naive value of a zoned type is already UTC: the session runs in UTC). */
function offsetSeconds(offset: string | undefined): number {
  if (offset === undefined || offset.toUpperCase() === 'Z') return 0;
  const digits = offset.slice(1).replaceAll(':', '');
  const seconds = Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2, 4) || 0) * 60 + Number(digits.slice(4, 6) || 0);
  return offset.startsWith('-') ? -seconds : seconds;
}

function isoFromUtcDate(date: Date, fraction: string | undefined): string {
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`
    + `T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}${fractionOf(fraction)}`;
}

function encodeJson(value: unknown): JsonValue {
  if (typeof value !== 'string') return toJson(value);
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    return value;
  }
}

/** Makes a driver's parsed value (arrays, objects) JSON-safe with the same rules as top-level values. */
function toJson(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return encodeFloat(value);
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(toJson);
  if (typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(value)) out[key] = toJson(item);
    return out;
  }
  return String(value);
}

function encodeBinary(value: unknown): JsonValue {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  const text = String(value);
  // PostgreSQL's hex text form, should a driver hand it over unparsed.
  if (/^\\x[0-9a-f]*$/i.test(text)) return Buffer.from(text.slice(2), 'hex').toString('base64');
  return Buffer.from(text, 'utf8').toString('base64');
}
