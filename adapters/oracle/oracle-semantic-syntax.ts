import { ANSI_SEMANTIC_SYNTAX, calendarDiff, mathCall, typeWithModifiers, lowerLike, offsetFetchClause, untypedNumberParam, type CastType, type PortableCall, type SemanticSqlSyntax, type TimeGrain } from '../../core/plugin-api/adapter-kit.js';

/** TRUNC's format models; `IW` starts the ISO week on Monday. */
const FORMATS: Record<TimeGrain, string> = { day: 'DD', week: 'IW', month: 'MM', quarter: 'Q', year: 'YYYY' };

const quarterOf = (x: string) => `TO_NUMBER(TO_CHAR(${x}, 'Q'))`;

/** Oracle's forms: ADD_MONTHS and intervals, date subtraction in days, its REGEXP_ functions (POSIX). */
function oraclePortable(call: PortableCall): string | undefined {
  const [a, b, c] = call.args as [string, string, string];
  switch (call.name) {
    case 'dateadd': {
      const months = { year: 12, quarter: 3, month: 1 }[call.unit as 'year'];
      if (months !== undefined) return `ADD_MONTHS(${b}, (${a}) * ${months})`;
      return call.unit === 'week' ? `(${b} + NUMTODSINTERVAL((${a}) * 7, 'DAY'))` : `(${b} + NUMTODSINTERVAL(${a}, '${call.unit.toUpperCase()}'))`;
    }
    case 'datediff': {
      if (call.unit === 'year' || call.unit === 'quarter' || call.unit === 'month') {
        return calendarDiff(call.unit, (x) => `EXTRACT(YEAR FROM ${x})`, call.unit === 'quarter' ? quarterOf : (x) => `EXTRACT(MONTH FROM ${x})`, a, b);
      }
      // Subtracting two DATEs gives days.
      const format = { week: 'IW', day: 'DD', hour: 'HH', minute: 'MI', second: undefined }[call.unit];
      const days = format ? `(TRUNC(${b}, '${format}') - TRUNC(${a}, '${format}'))` : `(CAST(${b} AS DATE) - CAST(${a} AS DATE))`;
      const scale = { week: '/ 7', day: '', hour: '* 24', minute: '* 1440', second: '* 86400' }[call.unit];
      return scale === '' ? days : `ROUND(${days} ${scale})`;
    }
    case 'split_part': {
      // INSTR finds the n-th delimiter; past the last part the text is '', which Oracle holds as NULL.
      const delimiter = (n: string) => `INSTR(${a}, ${b}, 1, ${n})`;
      const start = `(CASE WHEN ${c} = 1 THEN 1 ELSE ${delimiter(`${c} - 1`)} + LENGTH(${b}) END)`;
      const end = `(CASE WHEN ${delimiter(c)} = 0 THEN LENGTH(${a}) + 1 ELSE ${delimiter(c)} END)`;
      return `(CASE WHEN ${c} > 1 AND ${delimiter(`${c} - 1`)} = 0 THEN NULL ELSE SUBSTR(${a}, ${start}, ${end} - ${start}) END)`;
    }
    case 'regexp_like': return `REGEXP_LIKE(${a}, ${b})`;
    case 'regexp_extract': return `REGEXP_SUBSTR(${a}, ${b})`;
    case 'regexp_replace': return `REGEXP_REPLACE(${a}, ${b}, ${c})`;
    case 'regexp_count': return `REGEXP_COUNT(${a}, ${b})`;
    case 'log10': return `LOG(10, ${a})`;
    case 'pi': return 'ACOS(-1)';
    default: return mathCall(call.name, call.args);
  }
}

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
  // No BOOLEAN in SQL before 23ai.
  booleanLiteral: (value) => (value ? '1' : '0'),
  portable: oraclePortable,
  castType: (type: CastType, modifiers) => {
    const names: Record<CastType, string> = { integer: 'NUMBER(10)', bigint: 'NUMBER(19)', numeric: 'NUMBER', double: 'BINARY_DOUBLE', varchar: 'VARCHAR2', boolean: 'NUMBER(1)', date: 'DATE', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMP WITH TIME ZONE' };
    // VARCHAR2 needs a length.
    const sized = modifiers.length > 0 ? modifiers : type === 'varchar' ? [4000] : [];
    return type === 'numeric' || type === 'varchar' ? typeWithModifiers(names[type], sized) : names[type];
  },
  stringParam: (placeholder) => placeholder,
  groupsByPosition: false,
  // CROSS APPLY: Oracle 12c and later.
  rowValues: (select, alias) => `CROSS APPLY (SELECT ${select} FROM DUAL) ${alias}`,
  // EXTRACT has no quarter or day of year there.
  datePart: (part, expression) => (part === 'quarter' ? quarterOf(expression) : part === 'dayofyear' ? `TO_NUMBER(TO_CHAR(${expression}, 'DDD'))` : `EXTRACT(${part.toUpperCase()} FROM ${expression})`),
};
