/**
 * Writes a caller's expression as SQL of the VDB's dialect, resolving each name through `resolve` (which
 * knows the clause: a field at row level, a dimension or measure column at the query's grain). Only allowed
 * functions are written, by their allow-listed name; every literal becomes a bound value.
 */
import type { Expr, FrameBound, WindowFrame, WindowSpec } from './expression-ast.js';
import { queryInvalid } from './query-errors.js';
import type { SqlWriter } from './sql-writer.js';

/** Aggregates the compiler knows (the OSI expression language's required ones that SQL servers share). */
export const AGGREGATES: ReadonlySet<string> = new Set([
  'sum', 'count', 'avg', 'min', 'max', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp', 'median', 'any_value',
  'percentile_cont', 'percentile_disc',
]);
/** Functions that exist only over a window. */
export const WINDOW_FUNCTIONS: ReadonlySet<string> = new Set([
  'row_number', 'rank', 'dense_rank', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value', 'percent_rank', 'cume_dist',
]);
/** Conditional forms every dialect has, whether or not its allow-list names them (they are syntax in PostgreSQL). */
const CORE_SCALARS: ReadonlySet<string> = new Set(['coalesce', 'nullif', 'greatest', 'least']);

export function isAggregateCall(expression: Expr): boolean {
  return expression.kind === 'call' && expression.window === undefined && AGGREGATES.has(expression.name);
}

/** How a writer turns a name, or an aggregate call met at the query's grain, into SQL. */
export interface NameResolver {
  name(parts: string[]): string;
  /** An aggregate call (without window); absent where aggregates are not allowed. */
  aggregate?(call: Extract<Expr, { kind: 'call' }>): string;
  /** A window call, where it is computed elsewhere (inside an aggregate); absent: written in place. */
  window?(call: Extract<Expr, { kind: 'call' }>): string;
  /** A literal written into the text (a model's own expression, not a caller's); absent: bound. */
  literal?(value: string | number | boolean, digits: string | undefined): string;
}

export function writeExpression(expression: Expr, writer: SqlWriter, resolver: NameResolver, target: string): string {
  const write = (child: Expr): string => writeExpression(child, writer, resolver, target);
  const { syntax } = writer;
  switch (expression.kind) {
    case 'name': return resolver.name(expression.parts);
    case 'literal': {
      if (expression.value === null) return 'NULL';
      if (resolver.literal) return resolver.literal(expression.value, expression.digits);
      const placeholder = writer.param({ kind: 'constant', value: expression.value });
      return typeof expression.value === 'number' ? syntax.numberParam(placeholder, expression.value, /[.eE]/.test(expression.digits ?? '')) : placeholder;
    }
    case 'keyword': return expression.word;
    case 'unary': return expression.operator === 'NOT' ? `(NOT ${write(expression.operand)})` : `(${expression.operator}${write(expression.operand)})`;
    case 'binary':
      return expression.operator === '||' ? syntax.concat(write(expression.left), write(expression.right)) : `(${write(expression.left)} ${expression.operator} ${write(expression.right)})`;
    case 'logical': return `(${expression.operands.map(write).join(` ${expression.operator} `)})`;
    case 'in': return `(${write(expression.operand)} ${expression.negated ? 'NOT IN' : 'IN'} (${expression.list.map(write).join(', ')}))`;
    case 'between': return `(${write(expression.operand)} ${expression.negated ? 'NOT BETWEEN' : 'BETWEEN'} ${write(expression.low)} AND ${write(expression.high)})`;
    case 'like': {
      const [value, pattern] = [write(expression.operand), write(expression.pattern)];
      // A structured filter's pattern: its value is bound escaped, so `%` and `_` in it match themselves.
      if (expression.literal) return `(${value} LIKE ${pattern} ESCAPE '${syntax.likeEscape.character}')`;
      return `(${expression.caseInsensitive ? syntax.ilike(value, pattern, expression.negated) : `${value} ${expression.negated ? 'NOT LIKE' : 'LIKE'} ${pattern}`})`;
    }
    case 'isNull': return `(${write(expression.operand)} ${expression.negated ? 'IS NOT NULL' : 'IS NULL'})`;
    case 'distinctFrom': {
      const equal = syntax.nullSafeEquals(write(expression.left), write(expression.right));
      return expression.negated ? `(${equal})` : `(NOT (${equal}))`;
    }
    case 'cast': return `CAST(${write(expression.operand)} AS ${syntax.castType(expression.type, expression.modifiers)})`;
    case 'datePart': return syntax.datePart(expression.part, write(expression.operand));
    case 'truncate': return syntax.truncateTime(write(expression.operand), expression.grain);
    case 'position': {
      const [needle, haystack] = [write(expression.needle), write(expression.haystack)];
      return expression.reversed ? syntax.position(`REVERSE(${needle})`, `REVERSE(${haystack})`) : syntax.position(needle, haystack);
    }
    case 'portable': {
      const args = expression.args.map(write);
      const call = expression.name === 'dateadd' || expression.name === 'datediff'
        ? { name: expression.name, unit: expression.unit ?? 'day', args: args as [string, string] }
        : { name: expression.name, args };
      const sql = syntax.portable(call);
      if (sql === undefined) throw queryInvalid('E_FUNCTION_NOT_ALLOWED', target, `${target}: this datasource's server has no form of ${expression.name.toUpperCase()}`);
      return sql;
    }
    case 'case': {
      const branches = expression.branches.map((branch) => `WHEN ${write(branch.when)} THEN ${write(branch.then)}`).join(' ');
      const otherwise = expression.otherwise ? ` ELSE ${write(expression.otherwise)}` : '';
      return `(CASE${expression.operand ? ` ${write(expression.operand)}` : ''} ${branches}${otherwise} END)`;
    }
    case 'call': {
      if (expression.window && resolver.window) return resolver.window(expression);
      if (isAggregateCall(expression)) {
        if (!resolver.aggregate) throw queryInvalid('E_NESTED_AGGREGATION_DEFERRED', target, `${target}: ${expression.name.toUpperCase()} is an aggregate inside an aggregate; nested aggregation is deferred by the OSI Foundation`);
        return resolver.aggregate(expression);
      }
      checkAllowed(expression, writer, target);
      // PostgreSQL's CONCAT takes "any": a bound string there needs its type.
      const argument = (arg: Expr) => (expression.name === 'concat' && arg.kind === 'literal' && typeof arg.value === 'string' && !resolver.literal
        ? syntax.stringParam(writer.param({ kind: 'constant', value: arg.value }))
        : write(arg));
      const args = expression.star ? '*' : `${expression.distinct ? 'DISTINCT ' : ''}${expression.args.map(argument).join(', ')}`;
      return `${expression.name.toUpperCase()}(${args})${expression.window ? ` OVER (${windowOf(expression.window, writer, write)})` : ''}`;
    }
  }
}

/** An aggregate call itself, its arguments at row level (an aggregate inside is nested aggregation). */
export function writeAggregateCall(call: Extract<Expr, { kind: 'call' }>, writer: SqlWriter, rowLevel: NameResolver, target: string): string {
  const inner: NameResolver = { name: rowLevel.name, ...(rowLevel.window ? { window: rowLevel.window } : {}), ...(rowLevel.literal ? { literal: rowLevel.literal } : {}) };
  const args = call.args.map((arg) => writeExpression(arg, writer, inner, target));
  if (call.name === 'median' || call.name.startsWith('percentile_')) {
    // MEDIAN(x); PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x), read by the parser as (p, x).
    const median = call.name === 'median';
    if (call.distinct || args.length !== (median ? 1 : 2)) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${call.name.toUpperCase()} takes ${median ? 'one argument' : 'a fraction and an ordering'}, without DISTINCT`);
    const [fraction, argument] = median ? ['0.5', args[0] as string] : (args as [string, string]);
    const sql = writer.syntax.percentile(call.name === 'percentile_disc' ? 'disc' : 'cont', fraction, argument);
    if (sql === undefined) throw queryInvalid('E_FUNCTION_NOT_ALLOWED', target, `${target}: this datasource's server has no aggregate ${call.name.toUpperCase()}`);
    return sql;
  }
  return `${call.name.toUpperCase()}(${call.star ? '*' : `${call.distinct ? 'DISTINCT ' : ''}${args.join(', ')}`})`;
}

/** The allow-list: known aggregates (over a window here), window functions, and the dialect's scalar built-ins. */
function checkAllowed(call: Extract<Expr, { kind: 'call' }>, writer: SqlWriter, target: string): void {
  if (WINDOW_FUNCTIONS.has(call.name) || AGGREGATES.has(call.name)) {
    if (!call.window) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${call.name.toUpperCase()} needs an OVER clause`);
    return;
  }
  if (call.window) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${call.name.toUpperCase()} is no window function`);
  if (call.star || call.distinct) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: * and DISTINCT belong in an aggregate`);
  if (!CORE_SCALARS.has(call.name) && !writer.dialect.functionPolicy.allowed.has(call.name)) {
    throw queryInvalid('E_FUNCTION_NOT_ALLOWED', target, `${target}: the function ${call.name} is not allowed`);
  }
}

function windowOf(window: WindowSpec, writer: SqlWriter, write: (child: Expr) => string): string {
  const partition = window.partitionBy.length > 0 ? `PARTITION BY ${window.partitionBy.map(write).join(', ')}` : '';
  // NULL placement defaults as in the outer ORDER BY (OSI Foundation §6.10.2): high end.
  const order = window.orderBy.length > 0
    ? `ORDER BY ${window.orderBy.map((term) => writer.syntax.orderTerm(write(term.expression), term.direction, term.nulls ?? (term.direction === 'asc' ? 'last' : 'first'))).join(', ')}`
    : '';
  return [partition, order, window.frame ? frameText(window.frame) : ''].filter(Boolean).join(' ');
}

/** The frame clause; an offset is a whole number the parser checked, written as digits. */
function frameText(frame: WindowFrame): string {
  const bound = (value: FrameBound) => ('offset' in value ? `${value.offset} ${value.kind}` : value.kind);
  return frame.end ? `${frame.mode} BETWEEN ${bound(frame.start)} AND ${bound(frame.end)}` : `${frame.mode} ${bound(frame.start)}`;
}
