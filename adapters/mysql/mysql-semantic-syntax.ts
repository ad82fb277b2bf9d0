import { ANSI_SEMANTIC_SYNTAX, lowerLike, orderTermWithNullFlag, untypedNumberParam, type SemanticSqlSyntax, type TimeGrain } from '../../core/plugin-api/index.js';

/** The start of each grain as a DATE; a week starts on Monday (WEEKDAY is 0 on Monday). */
const GRAINS: Record<TimeGrain, (expression: string) => string> = {
  day: (x) => `DATE(${x})`,
  week: (x) => `DATE_SUB(DATE(${x}), INTERVAL WEEKDAY(${x}) DAY)`,
  month: (x) => `DATE_SUB(DATE(${x}), INTERVAL DAYOFMONTH(${x}) - 1 DAY)`,
  quarter: (x) => `(MAKEDATE(YEAR(${x}), 1) + INTERVAL (QUARTER(${x}) - 1) QUARTER)`,
  year: (x) => `MAKEDATE(YEAR(${x}), 1)`,
};

/** MySQL and MariaDB: `<=>`, no NULLS FIRST/LAST, `||` is OR, LIMIT needs a count before an OFFSET. */
export const MYSQL_SEMANTIC_SYNTAX: SemanticSqlSyntax = {
  truncateTime: (expression, grain) => GRAINS[grain](expression),
  nullSafeEquals: (left, right) => `${left} <=> ${right}`,
  orderTerm: orderTermWithNullFlag,
  // The largest row count MySQL accepts stands for "no limit" when only an offset is given.
  limitClause: (limit, offset) => (limit === undefined && offset === undefined ? '' : `LIMIT ${limit ?? '18446744073709551615'}${offset === undefined ? '' : ` OFFSET ${offset}`}`),
  // A backslash escapes inside a MySQL string literal (unless NO_BACKSLASH_ESCAPES): doubled, it is itself.
  stringLiteral: (value) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`,
  concat: (left, right) => `CONCAT(${left}, ${right})`,
  ilike: lowerLike,
  likeEscape: ANSI_SEMANTIC_SYNTAX.likeEscape,
  // MariaDB's MEDIAN and PERCENTILE_CONT are window functions only; MySQL has none.
  percentile: () => undefined,
  numberParam: untypedNumberParam,
  position: ANSI_SEMANTIC_SYNTAX.position,
  groupsByPosition: true,
  datePart: (part, expression) => (part === 'dayofyear' ? `DAYOFYEAR(${expression})` : `EXTRACT(${part.toUpperCase()} FROM ${expression})`),
};
