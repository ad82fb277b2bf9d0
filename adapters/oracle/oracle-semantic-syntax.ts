import { ANSI_SEMANTIC_SYNTAX, lowerLike, offsetFetchClause, untypedNumberParam, type SemanticSqlSyntax, type TimeGrain } from '../../core/plugin-api/index.js';

/** TRUNC's format models; `IW` starts the ISO week on Monday. */
const FORMATS: Record<TimeGrain, string> = { day: 'DD', week: 'IW', month: 'MM', quarter: 'Q', year: 'YYYY' };

/** Oracle: TRUNC for grains, DECODE for NULL-safe equality, OFFSET/FETCH, no ILIKE. */
export const ORACLE_SEMANTIC_SYNTAX: SemanticSqlSyntax = {
  ...ANSI_SEMANTIC_SYNTAX,
  truncateTime: (expression, grain) => `TRUNC(${expression}, '${FORMATS[grain]}')`,
  // DECODE compares NULL with NULL as equal.
  nullSafeEquals: (left, right) => `DECODE(${left}, ${right}, 1, 0) = 1`,
  limitClause: offsetFetchClause,
  ilike: lowerLike,
  numberParam: untypedNumberParam,
  position: (needle, haystack) => `INSTR(${haystack}, ${needle})`,
  groupsByPosition: false,
  // CROSS APPLY: Oracle 12c and later.
  rowValues: (select, alias) => `CROSS APPLY (SELECT ${select} FROM DUAL) ${alias}`,
  // EXTRACT has no quarter or day of year there.
  datePart: (part, expression) => (part === 'quarter' ? `TO_NUMBER(TO_CHAR(${expression}, 'Q'))` : part === 'dayofyear' ? `TO_NUMBER(TO_CHAR(${expression}, 'DDD'))` : `EXTRACT(${part.toUpperCase()} FROM ${expression})`),
};
