import { InputError } from '../plugin-api/errors.js';
import { driverCodeSuffix } from '../sql/driver-code.js';

/** What the database said of the value it refused: the value as text and the type it wanted, when known. */
interface Refusal {
  value: string;
  expected: string | undefined;
  /** `out of range` rather than malformed. */
  outOfRange: boolean;
}

/*
 * The driver messages of a refused value that quote it (PostgreSQL and PGlite, MySQL/MariaDB). Only the quoted
 * value and the type name are read from them; the rest of a driver message is never repeated to a caller.
 */
const REFUSALS: readonly { pattern: RegExp; read(match: RegExpExecArray): Refusal }[] = [
  { pattern: /invalid input syntax for type ([a-z ]+?): "(.*)"$/, read: (m) => ({ value: m[2] ?? '', expected: m[1], outOfRange: false }) },
  { pattern: /invalid input value for enum [^:]+: "(.*)"$/, read: (m) => ({ value: m[1] ?? '', expected: 'value of its list', outOfRange: false }) },
  { pattern: /value "(.*)" is out of range for type ([a-z ]+)$/, read: (m) => ({ value: m[1] ?? '', expected: m[2], outOfRange: true }) },
  { pattern: /date\/time field value out of range: "(.*)"$/, read: (m) => ({ value: m[1] ?? '', expected: 'date', outOfRange: true }) },
  { pattern: /Incorrect ([a-z]+) value: '(.*)' for column/, read: (m) => ({ value: m[2] ?? '', expected: m[1], outOfRange: false }) },
];

/** Type names as a person says them. */
const PLAIN_TYPES: Readonly<Record<string, string>> = {
  smallint: 'integer', bigint: 'integer', int: 'integer', numeric: 'number', decimal: 'number', real: 'number',
  'double precision': 'number', 'timestamp with time zone': 'timestamp', 'timestamp without time zone': 'timestamp',
};

const SHOWN_VALUE_CHARS = 60;

/**
 * Which request field held the value the database refused, and what is wrong with it, e.g.
 * `{ field: 'customerId', text: 'customerId: "seven" is not a valid integer' }`; undefined when the driver
 * quotes no value or no field holds it.
 */
export function refusedField(error: unknown, fields: Readonly<Record<string, unknown>>): { field: string; text: string } | undefined {
  const refusal = refusalOf(error);
  const field = refusal === undefined ? undefined : fieldHolding(fields, refusal.value);
  if (refusal === undefined || field === undefined) return undefined;
  const shown = refusal.value.length > SHOWN_VALUE_CHARS ? `${refusal.value.slice(0, SHOWN_VALUE_CHARS)}…` : refusal.value;
  const expected = refusal.expected === undefined ? undefined : (PLAIN_TYPES[refusal.expected] ?? refusal.expected);
  const verdict = expected === undefined ? 'does not fit the query' : refusal.outOfRange ? `is out of range for ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}` : `is not a valid ${expected}`;
  return { field, text: `${field}: ${JSON.stringify(shown)} ${verdict}` };
}

/**
 * 400 `invalid_body` for a value the database refused (SQLSTATE class 22 and the like), naming the request
 * field that held it when the driver quotes the value, e.g. `customerId: "seven" is not a valid integer`.
 * Without a quoted value, or when no field holds it, the message still says which query and the code.
 */
export function refusedValueError(query: string, error: unknown, fields: Readonly<Record<string, unknown>>): InputError {
  const code = driverCodeSuffix(error);
  const refused = refusedField(error, fields);
  if (refused === undefined) {
    return new InputError('invalid_body', `query ${query}: a request value does not fit the query${code}`, { cause: error });
  }
  return new InputError('invalid_body', `${refused.text} (query ${query}${code ? `, ${code.slice(2, -1)}` : ''})`, {
    details: { field: refused.field },
    cause: error,
  });
}

function refusalOf(error: unknown): Refusal | undefined {
  // knex puts the statement before the driver's message; the value is quoted on its last line
  const message = (error instanceof Error ? error.message : '').split('\n').at(-1) ?? '';
  for (const { pattern, read } of REFUSALS) {
    const match = pattern.exec(message);
    if (match) return read(match);
  }
  return undefined;
}

/** The path of the first request field (nested ones too, e.g. `lines[1].quantity`) whose value reads as `text`. */
function fieldHolding(value: unknown, text: string, path = ''): string | undefined {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = fieldHolding(item, text, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = fieldHolding(item, text, path === '' ? key : `${path}.${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return path !== '' && value !== null && value !== undefined && String(value) === text ? path : undefined;
}
