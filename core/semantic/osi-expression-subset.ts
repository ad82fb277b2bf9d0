/**
 * The OSI Foundation's expression language (expression_language.md, `OSI_SQL_2026`) at the level a model
 * needs: which functions, operators and constructs an expression may use, which calls aggregate, and
 * whether an aggregate is applied to another. A token scan, not a parser: the datasource's grammar parses
 * the expression afterwards (references, spans, one plain expression), so this only has to tell what the
 * subset admits from what it does not.
 */

/** Aggregates of the subset: core, statistical, percentile and approximate (all REQUIRED or RECOMMENDED). */
export const OSI_AGGREGATES: ReadonlySet<string> = new Set([
  'SUM', 'COUNT', 'AVG', 'MIN', 'MAX', 'STDDEV', 'STDDEV_POP', 'STDDEV_SAMP', 'VARIANCE', 'VAR_POP', 'VAR_SAMP',
  'MEDIAN', 'PERCENTILE_CONT', 'PERCENTILE_DISC', 'APPROX_COUNT_DISTINCT', 'APPROX_PERCENTILE',
]);

/** Every other function of the subset, by the sections of expression_language.md. */
const OSI_FUNCTIONS: ReadonlySet<string> = new Set([
  // Date/time: current, extraction, truncation, arithmetic, construction, formatting.
  'CURRENT_DATE', 'CURRENT_TIMESTAMP', 'CURRENT_TIME', 'YEAR', 'QUARTER', 'MONTH', 'DAY', 'DAYOFYEAR', 'HOUR', 'MINUTE',
  'SECOND', 'EXTRACT', 'DATE_PART', 'DATE_TRUNC', 'DATEADD', 'DATEDIFF', 'TO_DATE', 'TO_TIMESTAMP', 'TO_CHAR',
  // Strings, search, patterns.
  'CONCAT', 'LENGTH', 'LOWER', 'UPPER', 'TRIM', 'LTRIM', 'RTRIM', 'LEFT', 'RIGHT', 'SUBSTRING', 'REPLACE', 'SPLIT_PART',
  'POSITION', 'CHARINDEX', 'CONTAINS', 'STARTSWITH', 'ENDSWITH', 'REGEXP_LIKE', 'REGEXP_EXTRACT', 'REGEXP_REPLACE', 'REGEXP_COUNT',
  // Math, trigonometry, comparison.
  'ABS', 'ROUND', 'FLOOR', 'CEIL', 'CEILING', 'TRUNC', 'TRUNCATE', 'MOD', 'SIGN', 'POWER', 'SQRT', 'EXP', 'LN', 'LOG', 'LOG10',
  'SIN', 'COS', 'TAN', 'ASIN', 'ACOS', 'ATAN', 'ATAN2', 'RADIANS', 'DEGREES', 'PI', 'GREATEST', 'LEAST',
  // Conditionals and conversion.
  'IF', 'IFF', 'NULLIF', 'COALESCE', 'IFNULL', 'NVL', 'NVL2', 'ZEROIFNULL', 'NULLIFZERO', 'CAST', 'TRY_CAST',
  // Window functions (Foundation §6.10: in a field at its dataset's grain, in a metric at the query's).
  'ROW_NUMBER', 'RANK', 'DENSE_RANK', 'NTILE', 'PERCENT_RANK', 'CUME_DIST', 'LAG', 'LEAD', 'FIRST_VALUE', 'LAST_VALUE', 'NTH_VALUE',
]);

/** Keywords that may stand before `(` without being a call: `x IN (1, 2)`, `NOT (a OR b)`, `OVER (…)`. */
const KEYWORDS_BEFORE_PARENTHESIS: ReadonlySet<string> = new Set([
  'IN', 'NOT', 'AND', 'OR', 'WHEN', 'THEN', 'ELSE', 'CASE', 'BETWEEN', 'IS', 'LIKE', 'ILIKE', 'AS', 'FROM', 'DISTINCT', 'OVER', 'GROUP',
]);

/** Words that start a frame's extent: `GROUPS BETWEEN …`, `GROUPS UNBOUNDED PRECEDING`, `GROUPS CURRENT ROW`. */
const FRAME_STARTS: ReadonlySet<string> = new Set(['BETWEEN', 'UNBOUNDED', 'CURRENT']);

/** Keywords of constructs the subset excludes ("Not Supported in Expressions"). */
const EXCLUDED_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['SELECT', 'a subquery'], ['JOIN', 'a join'], ['WHERE', 'a WHERE clause (use a filter)'], ['HAVING', 'a HAVING clause'],
  ['UNION', 'a set operation'], ['INTERSECT', 'a set operation'], ['EXCEPT', 'a set operation'], ['WITH', 'a CTE'],
  ['EXISTS', 'a subquery'], ['LIMIT', 'a LIMIT clause'], ['VALUES', 'a VALUES list'], ['INTERVAL', 'an INTERVAL literal (use DATEADD)'],
  ['SIMILAR', 'SIMILAR TO (use LIKE or REGEXP_LIKE)'], ['COLLATE', 'COLLATE'], ['ARRAY', 'an array'],
]);

/** Operators of the subset: arithmetic, comparison, concatenation, and the punctuation of calls and names. */
const OPERATORS: ReadonlySet<string> = new Set(['+', '-', '*', '/', '%', '=', '<>', '!=', '<', '>', '<=', '>=', '||', '(', ')', ',', '.']);

type Token =
  | { kind: 'word'; text: string; start: number; end: number }
  | { kind: 'quoted' | 'string' | 'number'; start: number; end: number }
  | { kind: 'operator'; text: string; start: number; end: number };

/** One aggregate call: its name and the span from its name to its closing parenthesis. */
export interface AggregateCall {
  name: string;
  start: number;
  end: number;
}

export interface ScannedExpression {
  /** The names of the functions called (unqualified), upper case, in order. */
  calls: string[];
  /** Aggregate calls in order of their start; an aggregate with `OVER` is a window, not among them. */
  aggregates: AggregateCall[];
  /** True when the expression holds a window (`OVER (…)`), Foundation §6.10. */
  windowed: boolean;
  /** A window frame the Foundation defers (§6.10.6): a GROUPS frame, or a bound that is no literal number. */
  deferredFrame?: string;
  /** The first aggregate found inside another aggregate's parentheses, e.g. `COUNT` of `AVG(COUNT(x))`. */
  nested?: AggregateCall;
  /** The first window function inside another window's call or `OVER` clause, e.g. the inner `SUM` of `SUM(SUM(x) OVER ()) OVER ()`. */
  nestedWindow?: string;
  /** Why the expression is outside the OSI subset; absent when it is inside (or not checked). */
  outsideSubset?: string;
}

const OPERATOR_PATTERN = /\|\||<>|!=|<=|>=|::|->>|->|[-+*/%=<>(),.;:~!@#^&|?[\]{}$`\\]/y;

function tokens(text: string): Token[] | string {
  const result: Token[] = [];
  let position = 0;
  while (position < text.length) {
    const char = text[position] as string;
    if (/\s/.test(char)) {
      position++;
      continue;
    }
    const start = position;
    if (/[\p{L}_]/u.test(char)) {
      const match = /[\p{L}_][\p{L}\p{N}_$]*/uy;
      match.lastIndex = position;
      match.exec(text);
      position = match.lastIndex;
      result.push({ kind: 'word', text: text.slice(start, position).toUpperCase(), start, end: position });
    } else if (char === '"' || char === "'") {
      // A doubled quote escapes the quote inside.
      position++;
      while (position < text.length && !(text[position] === char && text[position + 1] !== char)) position += text[position] === char ? 2 : 1;
      if (position >= text.length) return `an unterminated ${char === '"' ? 'quoted identifier' : 'string literal'}`;
      position++;
      result.push({ kind: char === '"' ? 'quoted' : 'string', start, end: position });
    } else if (/[0-9]/.test(char) || (char === '.' && /[0-9]/.test(text[position + 1] ?? ''))) {
      const match = /(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?/y;
      match.lastIndex = position;
      match.exec(text);
      position = match.lastIndex;
      result.push({ kind: 'number', start, end: position });
    } else {
      OPERATOR_PATTERN.lastIndex = position;
      const match = OPERATOR_PATTERN.exec(text);
      if (!match) return `the character ${JSON.stringify(char)}`;
      position = OPERATOR_PATTERN.lastIndex;
      result.push({ kind: 'operator', text: match[0], start, end: position });
    }
  }
  return result;
}

/**
 * Scans an expression for its aggregate calls and their nesting; with `checkSubset`, also for what the OSI
 * subset excludes. `isAggregate` says which upper-case names aggregate (the subset's, or a datasource's).
 */
export function scanExpression(text: string, isAggregate: (name: string) => boolean, checkSubset: boolean): ScannedExpression {
  const scanned = tokens(text);
  if (typeof scanned === 'string') return { calls: [], aggregates: [], windowed: false, outsideSubset: scanned };
  const calls: string[] = [];
  const aggregates: AggregateCall[] = [];
  let outsideSubset: string | undefined;
  const outside = (reason: string) => {
    outsideSubset ??= reason;
  };
  // Open parentheses, each with the aggregate call it belongs to (if any).
  const open: (AggregateCall | undefined)[] = [];
  // Each aggregate call with the aggregate calls around it; nesting is judged once windows are known.
  const enclosing = new Map<AggregateCall, AggregateCall[]>();
  const windows = new Set<AggregateCall>();
  let windowed = false;
  let deferredFrame: string | undefined;
  scanned.forEach((token, index) => {
    const previous = scanned[index - 1];
    const next = scanned[index + 1];
    if (token.kind === 'operator') {
      if (token.text === '(') {
        const call = previous?.kind === 'word' && aggregates.at(-1)?.start === previous.start ? aggregates.at(-1) : undefined;
        open.push(call);
      } else if (token.text === ')') {
        const call = open.pop();
        if (call) call.end = token.end;
        // `SUM(x) OVER (…)` is a window function, not an aggregate (§6.10, §4.3).
        if (call && next?.kind === 'word' && next.text === 'OVER') windows.add(call);
      } else if (checkSubset && !OPERATORS.has(token.text)) {
        outside(`the operator ${token.text}`);
      }
      return;
    }
    if (token.kind !== 'word') return;
    if (token.text === 'OVER' && next?.kind === 'operator' && next.text === '(') windowed = true;
    if (windowed && token.text === 'GROUPS' && (next?.kind === 'number' || (next?.kind === 'word' && FRAME_STARTS.has(next.text)))) deferredFrame ??= 'a GROUPS frame';
    if (windowed && (token.text === 'PRECEDING' || token.text === 'FOLLOWING') && previous?.kind !== 'number' && !(previous?.kind === 'word' && previous.text === 'UNBOUNDED')) {
      deferredFrame ??= `a ${token.text} bound that is no literal whole number`;
    }
    const isCall = next?.kind === 'operator' && next.text === '(';
    if (checkSubset) {
      const excluded = EXCLUDED_KEYWORDS.get(token.text);
      if (excluded) outside(excluded);
      if (token.text === 'GROUP' && previous?.kind === 'word' && previous.text !== 'WITHIN') outside('a GROUP BY clause');
    }
    if (!isCall || KEYWORDS_BEFORE_PARENTHESIS.has(token.text)) return;
    if (previous?.kind !== 'operator' || previous.text !== '.') calls.push(token.text);
    if (checkSubset) {
      if (previous?.kind === 'operator' && previous.text === '.') outside(`the qualified function call ${text.slice(scanned[index - 2]?.start ?? token.start, token.end)}`);
      else if (!OSI_AGGREGATES.has(token.text) && !OSI_FUNCTIONS.has(token.text)) outside(`the function ${token.text}, which is not in the OSI expression language`);
    }
    if (!isAggregate(token.text)) return;
    const call: AggregateCall = { name: token.text, start: token.start, end: token.end };
    enclosing.set(call, open.filter((around): around is AggregateCall => around !== undefined));
    aggregates.push(call);
  });
  const plain = aggregates.filter((call) => !windows.has(call));
  const nested = plain.find((call) => enclosing.get(call)?.some((around) => !windows.has(around)));
  const nestedWindow = windowed ? windowInWindow(scanned) : undefined;
  return {
    calls, aggregates: plain, windowed, ...(deferredFrame ? { deferredFrame } : {}), ...(nested ? { nested } : {}),
    ...(nestedWindow ? { nestedWindow } : {}), ...(outsideSubset ? { outsideSubset } : {}),
  };
}

/**
 * The name of the first window function inside another window function's parentheses or `OVER` clause
 * (Foundation D-028: a nested window has no grain of its own to run at).
 */
function windowInWindow(scanned: readonly Token[]): string | undefined {
  // Each open parenthesis: the index of the call it belongs to, 'over' for an OVER clause, undefined otherwise.
  const open: (number | 'over' | undefined)[] = [];
  const around = new Map<number, (number | 'over')[]>();
  const windows = new Set<number>();
  scanned.forEach((token, index) => {
    if (token.kind !== 'operator') return;
    const previous = scanned[index - 1];
    if (token.text === '(') {
      const owner = previous?.kind === 'word' ? (previous.text === 'OVER' ? 'over' : index - 1) : undefined;
      if (typeof owner === 'number') around.set(owner, open.filter((entry) => entry !== undefined));
      open.push(owner);
    } else if (token.text === ')') {
      const owner = open.pop();
      const next = scanned[index + 1];
      if (typeof owner === 'number' && next?.kind === 'word' && next.text === 'OVER') windows.add(owner);
    }
  });
  const inner = [...windows].find((call) => around.get(call)?.some((entry) => entry === 'over' || windows.has(entry)));
  const token = inner === undefined ? undefined : scanned[inner];
  return token?.kind === 'word' ? token.text : undefined;
}

/** Calls that are SQL syntax in every supported database rather than functions a policy lists. */
const STANDARD_FORMS: ReadonlySet<string> = new Set(['CAST', 'EXTRACT', 'POSITION', 'SUBSTRING', 'TRIM', 'COALESCE', 'NULLIF', 'COUNT']);

/**
 * The first function of an OSI expression that the datasource does not have, judged by its dialect's
 * allow-list of built-ins (`FunctionPolicy`). The service writes OSI functions as they are; one the
 * database lacks (`IFF` on PostgreSQL, `MEDIAN` on SQL Server) is refused at activation rather than
 * failing in every query that uses it.
 */
export function unavailableFunction(scanned: ScannedExpression, allowed: ReadonlySet<string>): string | undefined {
  return scanned.calls.find((name) => !STANDARD_FORMS.has(name) && !allowed.has(name.toLowerCase()));
}
