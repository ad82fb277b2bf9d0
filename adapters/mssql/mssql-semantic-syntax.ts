import { lowerLike, mathCall, typeWithModifiers, offsetFetchClause, orderTermWithNullFlag, untypedNumberParam, type CastType, type PortableCall, type SemanticSqlSyntax, type TimeGrain } from '../../core/plugin-api/adapter-kit.js';

/** Day 0 is 1900-01-01, a Monday: whole periods since then, added back to it, give the period's start. */
const GRAINS: Record<TimeGrain, (expression: string) => string> = {
  day: (x) => `CAST(${x} AS DATE)`,
  week: (x) => `DATEADD(day, DATEDIFF(day, 0, ${x}) / 7 * 7, 0)`,
  month: (x) => `DATEADD(month, DATEDIFF(month, 0, ${x}), 0)`,
  quarter: (x) => `DATEADD(quarter, DATEDIFF(quarter, 0, ${x}), 0)`,
  year: (x) => `DATEADD(year, DATEDIFF(year, 0, ${x}), 0)`,
};

/**
 * SQL Server has DATEADD and DATEDIFF (whose weeks start on Sunday: shifted by a day, they start on Monday),
 * no SPLIT_PART with a part number and no regular expressions before 2025.
 */
function mssqlPortable(call: PortableCall): string | undefined {
  const [a, b] = call.args as [string, string];
  switch (call.name) {
    case 'dateadd': return `DATEADD(${call.unit}, ${a}, ${b})`;
    case 'datediff': return call.unit === 'week' ? `DATEDIFF(week, DATEADD(day, -1, ${a}), DATEADD(day, -1, ${b}))` : `DATEDIFF(${call.unit}, ${a}, ${b})`;
    // ROUND's third argument truncates; LOG takes the base second; LN is LOG.
    case 'trunc': return `ROUND(${a}, ${call.args.length === 1 ? '0' : b}, 1)`;
    case 'ceil': return `CEILING(${a})`;
    case 'ln': return `LOG(${a})`;
    case 'log': return `LOG(${b}, ${a})`;
    case 'mod': return `(${a} % ${b})`;
    case 'atan2': return `ATN2(${a}, ${b})`;
    case 'log10': case 'pi': return mathCall(call.name, call.args);
    default: return undefined;
  }
}

/** SQL Server: no IS NOT DISTINCT FROM before 2022, no NULLS FIRST/LAST, OFFSET needs an ORDER BY. */
export const MSSQL_SEMANTIC_SYNTAX: SemanticSqlSyntax = {
  truncateTime: (expression, grain) => GRAINS[grain](expression),
  nullSafeEquals: (left, right) => `(${left} = ${right} OR (${left} IS NULL AND ${right} IS NULL))`,
  orderTerm: orderTermWithNullFlag,
  limitClause: (limit, offset, ordered) => {
    const clause = offsetFetchClause(limit, offset);
    return clause === '' || ordered ? clause : `ORDER BY (SELECT NULL) ${clause}`;
  },
  stringLiteral: (value) => `N'${value.replaceAll("'", "''")}'`,
  booleanLiteral: (value) => (value ? '1' : '0'),
  concat: (left, right) => `CONCAT(${left}, ${right})`,
  ilike: lowerLike,
  // `[` opens a character class in SQL Server's LIKE.
  likeEscape: { character: '!', special: '%_![' },
  // PERCENTILE_CONT is a window function only there.
  percentile: () => undefined,
  numberParam: untypedNumberParam,
  position: (needle, haystack) => `CHARINDEX(${needle}, ${haystack})`,
  portable: mssqlPortable,
  castType: (type: CastType, modifiers) => {
    const names: Record<CastType, string> = { integer: 'INT', bigint: 'BIGINT', numeric: 'DECIMAL', double: 'FLOAT', varchar: 'NVARCHAR', boolean: 'BIT', date: 'DATE', timestamp: 'DATETIME2', timestamptz: 'DATETIMEOFFSET' };
    // An unsized NVARCHAR holds one character, an unsized DECIMAL no fraction.
    const sized = modifiers.length > 0 ? modifiers : type === 'varchar' ? ['MAX'] : type === 'numeric' ? [38, 10] : [];
    return typeWithModifiers(names[type], sized as number[]);
  },
  stringParam: (placeholder) => placeholder,
  groupsByPosition: false,
  rowValues: (select, alias) => `CROSS APPLY (SELECT ${select}) ${alias}`,
  datePart: (part, expression) => `DATEPART(${part}, ${expression})`,
};
