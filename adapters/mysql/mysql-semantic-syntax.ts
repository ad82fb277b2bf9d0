import { ANSI_SEMANTIC_SYNTAX, calendarDiff, mathCall, typeWithModifiers, lowerLike, orderTermWithNullFlag, untypedNumberParam, type CastType, type PortableCall, type SemanticSqlSyntax, type TimeGrain } from '../../core/plugin-api/adapter-kit.js';

/** The start of each grain as a DATE; a week starts on Monday (WEEKDAY is 0 on Monday). */
const GRAINS: Record<TimeGrain, (expression: string) => string> = {
  day: (x) => `DATE(${x})`,
  week: (x) => `DATE_SUB(DATE(${x}), INTERVAL WEEKDAY(${x}) DAY)`,
  month: (x) => `DATE_SUB(DATE(${x}), INTERVAL DAYOFMONTH(${x}) - 1 DAY)`,
  quarter: (x) => `(MAKEDATE(YEAR(${x}), 1) + INTERVAL (QUARTER(${x}) - 1) QUARTER)`,
  year: (x) => `MAKEDATE(YEAR(${x}), 1)`,
};

/** The Monday starting the week of `x`. */
const weekStart = (x: string) => `DATE_SUB(DATE(${x}), INTERVAL WEEKDAY(${x}) DAY)`;

/**
 * The portable functions in forms MySQL 8 and MariaDB share (MariaDB has no REGEXP_LIKE function, neither
 * has REGEXP_COUNT); their regular expressions are ICU (MySQL) and PCRE (MariaDB).
 */
function mysqlPortable(call: PortableCall): string | undefined {
  const [a, b, c] = call.args as [string, string, string];
  switch (call.name) {
    case 'dateadd': return `DATE_ADD(${b}, INTERVAL ${a} ${call.unit.toUpperCase()})`;
    case 'datediff': {
      if (call.unit === 'year' || call.unit === 'quarter' || call.unit === 'month') return calendarDiff(call.unit, (x) => `YEAR(${x})`, (x) => `${call.unit.toUpperCase()}(${x})`, a, b);
      if (call.unit === 'day') return `DATEDIFF(${b}, ${a})`;
      if (call.unit === 'week') return `(DATEDIFF(${weekStart(b)}, ${weekStart(a)}) DIV 7)`;
      // Whole units since a fixed instant, floored: the boundaries crossed, also before it.
      const seconds = { hour: 3600, minute: 60, second: 1 }[call.unit];
      const units = (x: string) => `FLOOR(TIMESTAMPDIFF(SECOND, '2000-01-01', ${x}) / ${seconds})`;
      return `(${units(b)} - ${units(a)})`;
    }
    case 'split_part': {
      // SUBSTRING_INDEX answers the last part past the end: '' there, as SPLIT_PART does.
      const parts = `((CHAR_LENGTH(${a}) - CHAR_LENGTH(REPLACE(${a}, ${b}, ''))) / CHAR_LENGTH(${b}) + 1)`;
      return `(CASE WHEN ${c} > ${parts} THEN '' ELSE SUBSTRING_INDEX(SUBSTRING_INDEX(${a}, ${b}, ${c}), ${b}, -1) END)`;
    }
    case 'regexp_like': return `(${a} REGEXP ${b})`;
    // MariaDB's REGEXP_SUBSTR answers '' without a match, MySQL's NULL: NULL on both.
    case 'regexp_extract': return `(CASE WHEN ${a} REGEXP ${b} THEN REGEXP_SUBSTR(${a}, ${b}) END)`;
    case 'regexp_replace': return `REGEXP_REPLACE(${a}, ${b}, ${c})`;
    case 'regexp_count': return undefined;
    case 'trunc': return `TRUNCATE(${a}, ${call.args.length === 1 ? '0' : b})`;
    default: return mathCall(call.name, call.args);
  }
}

/**
 * CAST's types in MySQL and MariaDB, which have few: whole numbers as SIGNED, strings as CHAR, booleans as
 * numbers; an unsized DECIMAL there has no fraction, so a NUMERIC without precision keeps 30 digits of one.
 */
function mysqlCastType(type: CastType, modifiers: readonly number[]): string {
  switch (type) {
    case 'integer': case 'bigint': case 'boolean': return 'SIGNED';
    case 'numeric': return modifiers.length === 0 ? 'DECIMAL(65, 30)' : typeWithModifiers('DECIMAL', modifiers);
    case 'double': return 'DOUBLE';
    case 'varchar': return typeWithModifiers('CHAR', modifiers);
    case 'date': return 'DATE';
    case 'timestamp': case 'timestamptz': return 'DATETIME';
  }
}

/** MySQL and MariaDB: `<=>`, no NULLS FIRST/LAST, `||` is OR, LIMIT needs a count before an OFFSET. */
export const MYSQL_SEMANTIC_SYNTAX: SemanticSqlSyntax = {
  truncateTime: (expression, grain) => GRAINS[grain](expression),
  nullSafeEquals: (left, right) => `${left} <=> ${right}`,
  orderTerm: orderTermWithNullFlag,
  // The largest row count MySQL accepts stands for "no limit" when only an offset is given.
  limitClause: (limit, offset) => (limit === undefined && offset === undefined ? '' : `LIMIT ${limit ?? '18446744073709551615'}${offset === undefined ? '' : ` OFFSET ${offset}`}`),
  // A backslash escapes inside a MySQL string literal (unless NO_BACKSLASH_ESCAPES): doubled, it is itself.
  stringLiteral: (value) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`,
  booleanLiteral: ANSI_SEMANTIC_SYNTAX.booleanLiteral,
  concat: (left, right) => `CONCAT(${left}, ${right})`,
  ilike: lowerLike,
  likeEscape: ANSI_SEMANTIC_SYNTAX.likeEscape,
  // MariaDB's MEDIAN and PERCENTILE_CONT are window functions only; MySQL has none.
  percentile: () => undefined,
  numberParam: untypedNumberParam,
  position: ANSI_SEMANTIC_SYNTAX.position,
  portable: mysqlPortable,
  castType: mysqlCastType,
  stringParam: (placeholder) => placeholder,
  groupsByPosition: true,
  datePart: (part, expression) => (part === 'dayofyear' ? `DAYOFYEAR(${expression})` : `EXTRACT(${part.toUpperCase()} FROM ${expression})`),
};
