import { LruCaches } from '../caching/lru-cache.js';
import { InternalError } from '../plugin-api/errors.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import { DeferredValue } from './deferred-value.js';
import { DefinitionError } from './definition-error.js';
import { scanSql, UnsupportedSqlConstruct, type SqlRegionKind } from './sql-quoting-scanner.js';
import type { PlaceholderOrigin } from '../plugin-api/template-engine.js';

/*
 * A rendered definition holds placeholder tokens `⟦<index>⟧` where request values would have been. The
 * brackets (U+27E6, U+27E7) are not YAML indicators, so a token survives plain, quoted and block scalars
 * unchanged, and no SQL dialect gives them a meaning. Definition sources may not contain them at all.
 */
/** The opening bracket of a placeholder token (`⟦0⟧`). */
export const PLACEHOLDER_OPEN = '⟦';
/** The closing bracket of a placeholder token. */
export const PLACEHOLDER_CLOSE = '⟧';
const WHOLE_TOKEN = /^⟦(\d+)⟧$/;
const ANY_TOKEN = /⟦(\d+)⟧/g;
const FIRST_TOKEN = /⟦(\d+)⟧/;

/** The token a rendered definition holds for the bound value at `index`. */
export function placeholderToken(index: number): string {
  return `${PLACEHOLDER_OPEN}${index}${PLACEHOLDER_CLOSE}`;
}

export function containsPlaceholder(text: string): boolean {
  return text.includes(PLACEHOLDER_OPEN);
}

/**
 * The value of a YAML scalar from a rendered definition. A scalar that is exactly one placeholder is the
 * captured value itself, with its type (number, boolean, null, object, DeferredValue); a string with
 * placeholders among other text gets their values as text; anything else is returned as it is.
 */
export function scalarValue(scalar: unknown, values: readonly unknown[]): unknown {
  if (typeof scalar !== 'string' || !containsPlaceholder(scalar)) return scalar;
  const whole = WHOLE_TOKEN.exec(scalar);
  if (whole) return valueAt(values, Number(whole[1]));
  return scalar.replace(ANY_TOKEN, (_token, index: string) => valueAsText(valueAt(values, Number(index))));
}

/** What `toSql` reads of the dialect: where its strings and comments end, and whether `\?` is a literal `?`. */
export type SqlTextDialect = Pick<SqlDialect, 'family' | 'lexicon' | 'placeholders'>;

export interface SqlTextOptions {
  /** The dialect of the datasource the SQL is sent to; its lexicon must match the server's. */
  dialect: SqlTextDialect;
  /** Lets errors name the definition file and line. */
  origin?: PlaceholderOrigin;
}

export interface SqlWithBindings {
  /** SQL for knex.raw: `?` per bound value, a literal `?` written `\?`. */
  sql: string;
  bindings: unknown[];
}

/**
 * SQL text from a rendered definition, with each placeholder replaced by a `?` in order. A
 * placeholder inside a string literal, a quoted identifier or a comment is a definition error: the value
 * would be read as text there, or not at all.
 */
export function toSql(text: string, values: readonly unknown[], options: SqlTextOptions): SqlWithBindings {
  const compiled = compileSqlText(text, options.dialect);
  if ('fault' in compiled) {
    const { fault } = compiled;
    const line = fault.placeholder === undefined ? undefined : options.origin?.lines[fault.placeholder];
    throw new DefinitionError({ file: options.origin?.file ?? '(rendered definition)', line, message: fault.message, remediation: fault.remediation });
  }
  return { sql: compiled.sql, bindings: compiled.order.map((index) => valueAt(values, index)) };
}

interface SqlFault {
  message: string;
  remediation: string;
  /** The placeholder at fault, when there is one: its origin line goes into the error. */
  placeholder?: number;
}

type CompiledSqlText = { sql: string; order: number[] } | { fault: SqlFault };

/** The same rendered text recurs for every request of the same shape: scan it once (per dialect). */
const compiledTexts = new LruCaches<SqlTextDialect, string, CompiledSqlText>(500);
const MAX_CACHED_SQL_LENGTH = 64 * 1024;

function compileSqlText(text: string, dialect: SqlTextDialect): CompiledSqlText {
  const cache = compiledTexts.of(dialect);
  const cached = cache.get(text);
  if (cached) return cached;
  let compiled: CompiledSqlText;
  try {
    compiled = bindPlaceholders(text, dialect);
  } catch (error) {
    if (error instanceof SqlTextFault) compiled = { fault: error.fault };
    else if (error instanceof UnsupportedSqlConstruct) compiled = { fault: { message: error.message, remediation: 'rewrite the SQL without it' } };
    else throw error;
  }
  if (text.length <= MAX_CACHED_SQL_LENGTH) cache.set(text, compiled);
  return compiled;
}

class SqlTextFault extends Error {
  constructor(readonly fault: SqlFault) {
    super(fault.message);
  }
}

const CODE_MARKS = /\\?(?:⟦(\d+)⟧|[?⟦⟧])/g;
const QUOTED_MARKS = /\\?[?⟦⟧]/g;

function bindPlaceholders(text: string, dialect: SqlTextDialect): { sql: string; order: number[] } {
  const order: number[] = [];
  const literalQuestionMark = (mark: string): string => {
    if (mark.startsWith('\\')) {
      throw new SqlTextFault({ message: 'a backslash right before ? is ambiguous for the SQL driver', remediation: 'remove the backslash' });
    }
    if (!dialect.placeholders.escapedQuestionMark) {
      throw new SqlTextFault({ message: `a literal ? cannot be sent to ${dialect.family}: the driver reads every ? as a parameter`, remediation: 'write it another way, e.g. CHR(63) or CHAR(63) inside a string' });
    }
    return '\\?';
  };
  const sql = scanSql(text, dialect.lexicon).map(({ kind, start, end }) => {
    const piece = text.slice(start, end);
    if (kind !== 'code') {
      const quoted = firstPlaceholder(piece);
      if (quoted !== undefined) throw new SqlTextFault(quotedPlaceholder(kind, quoted));
      return piece.replace(QUOTED_MARKS, (mark) => (mark.endsWith('?') ? literalQuestionMark(mark) : strayBracket()));
    }
    return piece.replace(CODE_MARKS, (mark, index: string | undefined) => {
      if (index === undefined) return mark.endsWith('?') ? literalQuestionMark(mark) : strayBracket();
      if (mark.startsWith('\\')) {
        throw new SqlTextFault({ message: 'a backslash right before {{ }} is ambiguous for the SQL driver', remediation: 'remove the backslash', placeholder: Number(index) });
      }
      order.push(Number(index));
      return '?';
    });
  }).join('');
  return { sql, order };
}

function firstPlaceholder(piece: string): number | undefined {
  const match = FIRST_TOKEN.exec(piece);
  return match ? Number(match[1]) : undefined;
}

function quotedPlaceholder(kind: SqlRegionKind, placeholder: number): SqlFault {
  return {
    message: 'quoted placeholder: bind the value, drop the quotes',
    remediation: `a {{ }} inside a ${kind} is not a bound value; write a = {{ x }}, not a = '{{ x }}'`,
    placeholder,
  };
}

function strayBracket(): never {
  throw new SqlTextFault({ message: `a stray ${PLACEHOLDER_OPEN} or ${PLACEHOLDER_CLOSE} in SQL text`, remediation: 'these characters are reserved for bound values' });
}

function valueAt(values: readonly unknown[], index: number): unknown {
  if (index >= values.length) throw new RangeError(`placeholder ${index} has no captured value (${values.length} captured)`);
  return values[index];
}

/** A value placed among other text: strings as they are, null as nothing, objects as JSON. */
function valueAsText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof DeferredValue) {
    throw new TypeError(`deferValueProcessing(contextVar='${value.contextVar}') must be a whole YAML scalar, not part of a text`);
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A captured value as a bound value. Objects and arrays are bound as their JSON text: drivers would
 * otherwise expand them differently (mysql2 turns an object into `a = 1, b = 2`, pg an array into an array
 * literal), and a value must mean the same on every backend. Read them with the dialect's JSON functions.
 */
export function boundValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof DeferredValue) {
    throw new InternalError('definition_error', `deferValueProcessing(contextVar='${value.contextVar}') only resolves in action operations`);
  }
  if (value instanceof Date || typeof value !== 'object') return value;
  return JSON.stringify(value);
}
