import type { DataType } from '../endpoint-types.js';

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type Coerced = { ok: true; value: unknown } | { ok: false; expected: string };

/**
 * A value assignment's value as the driver should receive it, by `dataType` (docs/endpoints.md). `json` binds
 * the whole value as JSON text; without a dataType only scalars are accepted. Null stays null.
 */
export function coerceValue(value: unknown, dataType: DataType | undefined): Coerced {
  if (value === null || value === undefined) return { ok: true, value: null };
  switch (dataType) {
    case 'json':
      return { ok: true, value: JSON.stringify(value) };
    case 'string':
      return typeof value === 'object' && !(value instanceof Date) ? fail('a string') : { ok: true, value: value instanceof Date ? value.toISOString() : String(value) };
    case 'integer': {
      const number = typeof value === 'number' ? value : typeof value === 'string' && INTEGER.test(value) ? Number(value) : Number.NaN;
      return Number.isSafeInteger(number) ? { ok: true, value: number } : fail('an integer');
    }
    case 'decimal':
      if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value: String(value) };
      return typeof value === 'string' && DECIMAL.test(value) ? { ok: true, value } : fail('a decimal number');
    case 'boolean':
      if (typeof value === 'boolean') return { ok: true, value };
      return value === 'true' || value === 'false' ? { ok: true, value: value === 'true' } : fail('true or false');
    case 'date':
      if (value instanceof Date) return { ok: true, value: value.toISOString().slice(0, 10) };
      return typeof value === 'string' && DATE.test(value) && !Number.isNaN(Date.parse(value)) ? { ok: true, value } : fail('a date (YYYY-MM-DD)');
    case 'timestamp': {
      const time = value instanceof Date ? value : typeof value === 'string' && value.length >= 10 ? new Date(value) : undefined;
      return time && !Number.isNaN(time.getTime()) ? { ok: true, value: time } : fail('an ISO-8601 timestamp');
    }
    case 'uuid':
      return typeof value === 'string' && UUID.test(value) ? { ok: true, value } : fail('a UUID');
    case undefined:
      return typeof value === 'object' && !(value instanceof Date) ? fail('a scalar (set dataType: json for objects and lists)') : { ok: true, value };
  }
}

function fail(expected: string): Coerced {
  return { ok: false, expected };
}
