/**
 * What the semantic query compiler (docs/semantic-query.md) asks of a dialect beyond quoting: the few SQL
 * forms that differ between servers. A dialect states its own (`DialectBase.semanticSyntax`); the defaults
 * are ANSI SQL, which PostgreSQL and Oracle mostly speak. Every argument is SQL text the compiler built from
 * the model and bound placeholders, never caller text.
 */

/** The time grains a dimension may be bucketed by. */
export const TIME_GRAINS = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type TimeGrain = (typeof TIME_GRAINS)[number];

/** The date parts the OSI expression language extracts (`YEAR(x)`, `EXTRACT(MONTH FROM x)`, …). */
export const DATE_PARTS = ['year', 'quarter', 'month', 'day', 'hour', 'minute', 'second', 'dayofyear'] as const;
export type DatePart = (typeof DATE_PARTS)[number];

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
  /**
   * A bound number (`placeholder` is its `?`) where the server cannot always tell its type from the context:
   * PostgreSQL reads a lone parameter in `CASE … THEN ? ELSE ? END` as text. Servers that type parameters
   * from the bound value answer the placeholder itself.
   */
  numberParam(placeholder: string, value: number): string;
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

/** ANSI SQL: what PostgreSQL speaks, and the base the other dialects change. */
export const ANSI_SEMANTIC_SYNTAX: SemanticSqlSyntax = {
  truncateTime: (expression, grain) => `date_trunc('${grain}', ${expression})`,
  nullSafeEquals: (left, right) => `${left} IS NOT DISTINCT FROM ${right}`,
  orderTerm: (expression, direction, nulls) => `${expression} ${direction.toUpperCase()} NULLS ${nulls.toUpperCase()}`,
  limitClause: (limit, offset) => [limit === undefined ? '' : `LIMIT ${limit}`, offset === undefined ? '' : `OFFSET ${offset}`].filter(Boolean).join(' '),
  stringLiteral: (value) => `'${value.replaceAll("'", "''")}'`,
  concat: (left, right) => `(${left} || ${right})`,
  ilike: (value, pattern, negated) => `${value} ${negated ? 'NOT ILIKE' : 'ILIKE'} ${pattern}`,
  // Not the backslash: MySQL reads it as an escape inside the string literal that names it.
  likeEscape: { character: '!', special: '%_!' },
  percentile: (kind, fraction, argument) => `PERCENTILE_${kind.toUpperCase()}(${fraction}) WITHIN GROUP (ORDER BY ${argument})`,
  datePart: (part, expression) => `EXTRACT(${part === 'dayofyear' ? 'DOY' : part.toUpperCase()} FROM ${expression})`,
  position: (needle, haystack) => `POSITION(${needle} IN ${haystack})`,
  numberParam: (placeholder, value) => `CAST(${placeholder} AS ${!Number.isInteger(value) ? 'NUMERIC' : Math.abs(value) <= 2147483647 ? 'INTEGER' : 'BIGINT'})`,
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
