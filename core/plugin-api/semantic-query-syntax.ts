/**
 * What the semantic query compiler (docs/semantic-query.md) asks of a dialect beyond quoting: the few SQL
 * forms that differ between servers. A dialect states its own (`DialectBase.semanticSyntax`); the defaults
 * are ANSI SQL, which PostgreSQL and Oracle mostly speak. Every argument is SQL text the compiler built from
 * the model and bound placeholders, never caller text.
 */

/** The time grains a dimension may be bucketed by. */
export const TIME_GRAINS = ['day', 'week', 'month', 'quarter', 'year'] as const;
/** One of `TIME_GRAINS`. */
export type TimeGrain = (typeof TIME_GRAINS)[number];

/** The date parts the OSI expression language extracts (`YEAR(x)`, `EXTRACT(MONTH FROM x)`, …). */
export const DATE_PARTS = ['year', 'quarter', 'month', 'day', 'hour', 'minute', 'second', 'dayofyear'] as const;
/** One of `DATE_PARTS`. */
export type DatePart = (typeof DATE_PARTS)[number];

/** The units of the OSI expression language's date arithmetic (`DATEADD(day, 7, d)`, `DATEDIFF(month, a, b)`). */
export const DATE_UNITS = ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second'] as const;
/** One of `DATE_UNITS`. */
export type DateUnit = (typeof DATE_UNITS)[number];

/**
 * The OSI expression language's functions that servers spell differently or lack, each with its arguments
 * (SQL text) in the language's order: `DATEADD(unit, amount, date)`, `DATEDIFF(unit, start, end)` (the unit
 * boundaries crossed from start to end; a week starts on Monday), `SPLIT_PART(text, delimiter, part)`
 * (1-based, '' past the last part), `REGEXP_LIKE(text, pattern)`, `REGEXP_EXTRACT(text, pattern)` (the
 * first match, NULL without one), `REGEXP_REPLACE(text, pattern, replacement)` (every match),
 * `REGEXP_COUNT(text, pattern)`.
 */
export type PortableCall =
  | { name: 'dateadd' | 'datediff'; unit: DateUnit; args: [string, string] }
  | { name: 'split_part' | 'regexp_like' | 'regexp_extract' | 'regexp_replace' | 'regexp_count'; args: string[] }
  /** The math functions whose names or arguments differ: `TRUNC(x[, d])` (also `TRUNCATE`), `LOG(base, x)`, … */
  | { name: MathFunction; args: string[] };

/** The math functions of the OSI expression language a dialect writes in its own form. */
export type MathFunction = 'trunc' | 'ceil' | 'ln' | 'log' | 'log10' | 'mod' | 'atan2' | 'pi';

/** A math function as the call of that name. */
export function mathCall(name: MathFunction, args: readonly string[]): string {
  return `${name.toUpperCase()}(${args.join(', ')})`;
}

/** The types a CAST of the OSI expression language may name, by their portable names. */
export type CastType = 'integer' | 'bigint' | 'numeric' | 'double' | 'varchar' | 'boolean' | 'date' | 'timestamp' | 'timestamptz';

/** How a dialect writes the OSI expression language's functions and clauses. */
export interface SemanticSqlSyntax {
  /** The start of the grain's period holding `expression` (a week starts on Monday, ISO 8601). */
  truncateTime(expression: string, grain: TimeGrain): string;
  /** True when `left` and `right` are equal or both NULL. */
  nullSafeEquals(left: string, right: string): string;
  /** One ORDER BY term with an explicit NULL placement, whether or not the server has `NULLS FIRST/LAST`. */
  orderTerm(expression: string, direction: 'asc' | 'desc', nulls: 'first' | 'last'): string;
  /**
   * The clause closing a statement that skips `offset` rows and keeps at most `limit` (each a `?` or
   * undefined); `ordered` says whether the statement has an ORDER BY (SQL Server's OFFSET needs one).
   */
  limitClause(limit: string | undefined, offset: string | undefined, ordered: boolean): string;
  /**
   * A string literal of the model's own expressions (written into the package SQL, never a caller's value,
   * which is bound).
   */
  stringLiteral(value: string): string;
  /** A boolean literal of the model's own expressions (`1`/`0` where the server has no TRUE). */
  booleanLiteral(value: boolean): string;
  /** `left || right`: string concatenation. */
  concat(left: string, right: string): string;
  /** Case-insensitive LIKE. */
  ilike(value: string, pattern: string, negated: boolean): string;
  /**
   * How a LIKE matches a value literally (`contains`, `startsWith`, `endsWith` filters): `LIKE ? ESCAPE
   * '<character>'`, the bound value having `character` before each of `special` (the server's wildcards and
   * the escape character itself).
   */
  readonly likeEscape: { character: string; special: string };
  /**
   * `PERCENTILE_CONT`/`PERCENTILE_DISC(fraction) WITHIN GROUP (ORDER BY argument)` as an aggregate (the OSI
   * expression language's percentiles; `MEDIAN` is the continuous one at 0.5), or undefined where the server
   * has no aggregate form (MySQL and MariaDB; SQL Server's is a window function only).
   */
  percentile(kind: 'cont' | 'disc', fraction: string, argument: string): string | undefined;
  /** The 1-based position of `needle` in `haystack`, 0 when it is absent. */
  position(needle: string, haystack: string): string;
  /** The part of a date or timestamp, as a number. */
  datePart(part: DatePart, expression: string): string;
  /** The server's name of a CAST's type; `modifiers` are its length or precision and scale (digits). */
  castType(type: CastType, modifiers: readonly number[]): string;
  /** One of the functions of `PortableCall` in the server's SQL; undefined where the server has no form of it. */
  portable(call: PortableCall): string | undefined;
  /** A bound string where the server cannot tell its type (PostgreSQL's `CONCAT(?, …)` takes "any"). */
  stringParam(placeholder: string): string;
  /**
   * A bound number (`placeholder` is its `?`) where the server cannot always tell its type from the context:
   * PostgreSQL reads a lone parameter in `CASE … THEN ? ELSE ? END` as text. Servers that type parameters
   * from the bound value answer the placeholder itself. `decimal`: written with a point or an exponent
   * (`1.0`), so a decimal even when its value is whole (`COUNT(x) * 1.0 / n` must not divide integers).
   */
  numberParam(placeholder: string, value: number, decimal: boolean): string;
  /**
   * Whether `GROUP BY 2` names the second column of the select list. A grouped expression holding a bound
   * value is grouped that way where it can be: written twice, it would hold two parameters the server does
   * not know to be equal.
   */
  readonly groupsByPosition: boolean;
  /**
   * Where the server does not group by position: a derived table computing `select` (`expression AS name,
   * …`) once per row of the FROM clause before it (SQL Server's and Oracle's `CROSS APPLY`), so a grouped
   * expression holding a bound value is grouped by its column, its value bound once.
   */
  rowValues?(select: string, alias: string): string;
}

/** `DATEDIFF` of the calendar units by their year and part numbers (`year`, `part` write `EXTRACT`s). */
export function calendarDiff(unit: 'year' | 'quarter' | 'month', year: (x: string) => string, part: (x: string) => string, start: string, end: string): string {
  const years = `(${year(end)} - ${year(start)})`;
  return unit === 'year' ? years : `(${years} * ${unit === 'quarter' ? 4 : 12} + ${part(end)} - ${part(start)})`;
}

/** A type name with its modifiers: `DECIMAL(10, 2)`. */
export function typeWithModifiers(name: string, modifiers: readonly number[]): string {
  return modifiers.length === 0 ? name : `${name}(${modifiers.join(', ')})`;
}

/** PostgreSQL's forms of the portable functions; its regular expressions are POSIX (ARE). */
function postgresPortable(call: PortableCall): string | undefined {
  const [a, b, c] = call.args as [string, string, string];
  switch (call.name) {
    case 'dateadd': {
      const step = { year: '1 year', quarter: '3 months', month: '1 month', week: '7 days', day: '1 day', hour: '1 hour', minute: '1 minute', second: '1 second' }[call.unit];
      return `(${b} + (${a}) * INTERVAL '${step}')`;
    }
    case 'datediff': {
      const extract = (part: string) => (x: string) => `EXTRACT(${part} FROM ${x})`;
      if (call.unit === 'year' || call.unit === 'quarter' || call.unit === 'month') return calendarDiff(call.unit, extract('YEAR'), extract(call.unit.toUpperCase()), a, b);
      if (call.unit === 'day' || call.unit === 'week') {
        const days = `(CAST(date_trunc('${call.unit}', ${b}) AS DATE) - CAST(date_trunc('${call.unit}', ${a}) AS DATE))`;
        return call.unit === 'day' ? days : `(${days} / 7)`;
      }
      const seconds = { hour: 3600, minute: 60, second: 1 }[call.unit];
      return `CAST((EXTRACT(EPOCH FROM date_trunc('${call.unit}', ${b})) - EXTRACT(EPOCH FROM date_trunc('${call.unit}', ${a}))) / ${seconds} AS BIGINT)`;
    }
    case 'split_part': return `SPLIT_PART(${a}, ${b}, ${c})`;
    case 'regexp_like': return `(${a} ~ ${b})`;
    case 'regexp_extract': return `REGEXP_SUBSTR(${a}, ${b})`;
    case 'regexp_replace': return `REGEXP_REPLACE(${a}, ${b}, ${c}, 'g')`;
    case 'regexp_count': return `REGEXP_COUNT(${a}, ${b})`;
    // TRUNC and two-argument LOG take NUMERIC there, not a double.
    case 'trunc': return call.args.length === 1 ? `TRUNC(${a})` : `TRUNC(CAST(${a} AS NUMERIC), ${b})`;
    case 'log': return `LOG(CAST(${a} AS NUMERIC), CAST(${b} AS NUMERIC))`;
    default: return mathCall(call.name, call.args);
  }
}

/** ANSI SQL: what PostgreSQL speaks, and the base the other dialects change. */
export const ANSI_SEMANTIC_SYNTAX: SemanticSqlSyntax = {
  truncateTime: (expression, grain) => `date_trunc('${grain}', ${expression})`,
  nullSafeEquals: (left, right) => `${left} IS NOT DISTINCT FROM ${right}`,
  orderTerm: (expression, direction, nulls) => `${expression} ${direction.toUpperCase()} NULLS ${nulls.toUpperCase()}`,
  limitClause: (limit, offset) => [limit === undefined ? '' : `LIMIT ${limit}`, offset === undefined ? '' : `OFFSET ${offset}`].filter(Boolean).join(' '),
  stringLiteral: (value) => `'${value.replaceAll("'", "''")}'`,
  booleanLiteral: (value) => (value ? 'TRUE' : 'FALSE'),
  concat: (left, right) => `(${left} || ${right})`,
  ilike: (value, pattern, negated) => `${value} ${negated ? 'NOT ILIKE' : 'ILIKE'} ${pattern}`,
  // Not the backslash: MySQL reads it as an escape inside the string literal that names it.
  likeEscape: { character: '!', special: '%_!' },
  percentile: (kind, fraction, argument) => `PERCENTILE_${kind.toUpperCase()}(${fraction}) WITHIN GROUP (ORDER BY ${argument})`,
  datePart: (part, expression) => `EXTRACT(${part === 'dayofyear' ? 'DOY' : part.toUpperCase()} FROM ${expression})`,
  position: (needle, haystack) => `POSITION(${needle} IN ${haystack})`,
  portable: postgresPortable,
  castType: (type, modifiers) => typeWithModifiers({ double: 'DOUBLE PRECISION', timestamptz: 'TIMESTAMPTZ' }[type as string] ?? type.toUpperCase(), modifiers),
  stringParam: (placeholder) => `CAST(${placeholder} AS TEXT)`,
  numberParam: (placeholder, value, decimal) => `CAST(${placeholder} AS ${decimal || !Number.isInteger(value) ? 'NUMERIC' : Math.abs(value) <= 2147483647 ? 'INTEGER' : 'BIGINT'})`,
  groupsByPosition: true,
};

/** A bound number as its placeholder alone: the server types it from the value bound. */
export function untypedNumberParam(placeholder: string): string {
  return placeholder;
}

/** NULL placement for servers without `NULLS FIRST/LAST` (MySQL, SQL Server): a leading sort on nullness. */
export function orderTermWithNullFlag(expression: string, direction: 'asc' | 'desc', nulls: 'first' | 'last'): string {
  return `CASE WHEN ${expression} IS NULL THEN ${nulls === 'first' ? 0 : 1} ELSE ${nulls === 'first' ? 1 : 0} END, ${expression} ${direction.toUpperCase()}`;
}

/** Case-insensitive LIKE by lower-casing both sides, where the server has no ILIKE. */
export function lowerLike(value: string, pattern: string, negated: boolean): string {
  return `LOWER(${value}) ${negated ? 'NOT LIKE' : 'LIKE'} LOWER(${pattern})`;
}

/** `OFFSET … ROWS FETCH NEXT … ROWS ONLY` (SQL:2008): SQL Server and Oracle. */
export function offsetFetchClause(limit: string | undefined, offset: string | undefined): string {
  if (limit === undefined && offset === undefined) return '';
  const skip = `OFFSET ${offset ?? '0'} ROWS`;
  return limit === undefined ? skip : `${skip} FETCH NEXT ${limit} ROWS ONLY`;
}
