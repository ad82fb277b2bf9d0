/**
 * Parses a caller's OSI expression with a real SQL parser (libpg-query: ANSI SQL as PostgreSQL reads it,
 * whatever the VDB's dialect) and keeps only the OSI expression subset: names, literals, operators, CASE,
 * CAST, function calls (checked against the allow-list later) and windows. Anything else (a subquery, a
 * parameter, `*` outside COUNT(*), a clause) is refused; no caller text ever reaches the compiled SQL.
 */
import { parseSync } from 'libpg-query';
import { messageOf } from '../plugin-api/errors.js';
import { DATE_PARTS, DATE_UNITS, TIME_GRAINS, type CastType, type DateUnit } from '../plugin-api/semantic-query-syntax.js';
import type { Expr, FrameBound, Literal, WindowFrame, WindowSpec } from './expression-ast.js';
import { queryInvalid } from './query-errors.js';

type Node = { [field: string]: unknown };

/** Deeper trees are refused: no question nests that far, and the walks recurse. */
const MAX_DEPTH = 64;

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=', '+', '-', '*', '/', '%', '||']);
/** Types a CAST may name (as the parser names them), by their portable names. */
const CAST_TYPES: ReadonlyMap<string, CastType> = new Map([
  ['date', 'date'], ['timestamp', 'timestamp'], ['timestamptz', 'timestamptz'], ['numeric', 'numeric'], ['decimal', 'numeric'],
  ['int4', 'integer'], ['integer', 'integer'], ['int8', 'bigint'], ['bigint', 'bigint'], ['float8', 'double'], ['float4', 'double'], ['double', 'double'],
  ['varchar', 'varchar'], ['text', 'varchar'], ['string', 'varchar'], ['bool', 'boolean'], ['boolean', 'boolean'],
]);

class Refused extends Error {}

export function parseExpression(text: string, target: string): Expr {
  let statements: unknown[];
  try {
    statements = parseSync(`SELECT ${text}`).stmts ?? [];
  } catch (error) {
    throw queryInvalid('E_INVALID_EXPRESSION', target, `${target} does not parse: ${messageOf(error)}`);
  }
  try {
    const select = ((statements[0] as Node | undefined)?.['stmt'] as Node | undefined)?.['SelectStmt'] as Node | undefined;
    const extra = select && Object.keys(select).filter((key) => !['targetList', 'limitOption', 'op'].includes(key));
    const targets = select?.['targetList'] as Node[] | undefined;
    const only = targets?.length === 1 ? (targets[0]?.['ResTarget'] as Node | undefined) : undefined;
    if (statements.length !== 1 || !only || (extra && extra.length > 0) || only['name'] !== undefined) {
      throw new Refused('it must be one expression, without alias, clause or second statement');
    }
    return convert(only['val'], 0);
  } catch (error) {
    if (error instanceof Refused) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${error.message}`);
    if (error instanceof RangeError) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target} nests too deeply`);
    throw error;
  }
}

function sval(node: unknown): string {
  return ((node as Node)['String'] as { sval?: string } | undefined)?.sval ?? '';
}

function convert(value: unknown, depth: number): Expr {
  if (depth > MAX_DEPTH) throw new Refused(`it nests deeper than ${MAX_DEPTH} levels`);
  const [type, node] = Object.entries(value as Node)[0] as [string, Node];
  const next = (child: unknown) => convert(child, depth + 1);
  switch (type) {
    case 'ColumnRef': {
      const fields = node['fields'] as Node[];
      if (fields.some((field) => 'A_Star' in field)) throw new Refused('`*` is allowed only in COUNT(*)');
      return { kind: 'name', parts: fields.map(sval) };
    }
    case 'A_Const': {
      const digits = (node['fval'] as { fval?: string } | undefined)?.fval;
      return { kind: 'literal', value: constant(node), ...(digits !== undefined && /^[0-9.eE+-]+$/.test(digits) ? { digits } : {}) };
    }
    case 'TypeCast': {
      const names = ((node['typeName'] as Node)['names'] as Node[]).map(sval).filter((name) => name !== 'pg_catalog');
      const typeName = names.join('.').toLowerCase();
      const type = CAST_TYPES.get(typeName);
      if (!type) throw new Refused(`CAST to ${typeName} is not supported`);
      // Length, precision and scale: whole numbers, written as digits.
      const modifiers = (((node['typeName'] as Node)['typmods'] as Node[] | undefined) ?? []).map((modifier) => {
        const integer = ((modifier['A_Const'] as Node | undefined)?.['ival'] as Node | undefined);
        const value = integer === undefined ? undefined : Number(integer['ival'] ?? 0);
        if (value === undefined || !Number.isSafeInteger(value) || value < 0) throw new Refused(`CAST to ${typeName}: a length, precision or scale is a whole number`);
        return value;
      });
      return { kind: 'cast', operand: next(node['arg']), type, modifiers };
    }
    case 'BoolExpr': {
      const args = (node['args'] as unknown[]).map(next);
      if (node['boolop'] === 'NOT_EXPR') return { kind: 'unary', operator: 'NOT', operand: args[0] as Expr };
      return { kind: 'logical', operator: node['boolop'] === 'AND_EXPR' ? 'AND' : 'OR', operands: args };
    }
    case 'NullTest': return { kind: 'isNull', operand: next(node['arg']), negated: node['nulltesttype'] === 'IS_NOT_NULL' };
    case 'BooleanTest': {
      const test = String(node['booltesttype']);
      const truth = test.includes('TRUE');
      const comparison: Expr = { kind: 'distinctFrom', left: next(node['arg']), right: { kind: 'literal', value: truth }, negated: !test.includes('NOT') };
      return comparison;
    }
    case 'A_Expr': return operatorExpression(node, next);
    case 'FuncCall': return call(node, next);
    case 'CoalesceExpr': return { kind: 'call', name: 'coalesce', args: (node['args'] as unknown[]).map(next), star: false, distinct: false, window: undefined };
    case 'MinMaxExpr': {
      const name = node['op'] === 'IS_GREATEST' ? 'greatest' : 'least';
      return { kind: 'call', name, args: (node['args'] as unknown[]).map(next), star: false, distinct: false, window: undefined };
    }
    case 'CaseExpr': return {
      kind: 'case',
      operand: node['arg'] === undefined ? undefined : next(node['arg']),
      branches: (node['args'] as Node[]).map((branch) => {
        const when = branch['CaseWhen'] as Node;
        return { when: next(when['expr']), then: next(when['result']) };
      }),
      otherwise: node['defresult'] === undefined ? undefined : next(node['defresult']),
    };
    case 'SQLValueFunction': {
      if (node['op'] === 'SVFOP_CURRENT_DATE') return { kind: 'keyword', word: 'CURRENT_DATE' };
      if (node['op'] === 'SVFOP_CURRENT_TIMESTAMP') return { kind: 'keyword', word: 'CURRENT_TIMESTAMP' };
      throw new Refused('only CURRENT_DATE and CURRENT_TIMESTAMP are allowed among the SQL value functions');
    }
    case 'SubLink': throw new Refused('a subquery is not allowed');
    case 'ParamRef': throw new Refused('a parameter is not allowed; write the value');
    default: throw new Refused(`${type} is not part of the OSI expression subset`);
  }
}

function constant(node: Node): Literal {
  if (node['isnull']) return null;
  if ('ival' in node) return Number((node['ival'] as { ival?: number }).ival ?? 0);
  if ('fval' in node) return Number((node['fval'] as { fval: string }).fval);
  if ('boolval' in node) return Boolean((node['boolval'] as { boolval?: boolean }).boolval);
  if ('sval' in node) return (node['sval'] as { sval: string }).sval;
  throw new Refused('a bit-string literal is not supported');
}

function operatorExpression(node: Node, next: (child: unknown) => Expr): Expr {
  const kind = String(node['kind']);
  const operator = (node['name'] as unknown[]).map(sval).join('.');
  const left = node['lexpr'] === undefined ? undefined : next(node['lexpr']);
  const listOf = (items: unknown) => ((items as Node)['List'] as Node)['items'] as unknown[];
  switch (kind) {
    case 'AEXPR_OP':
      if (!COMPARISONS.has(operator)) throw new Refused(`the operator ${operator} is not part of the OSI expression subset`);
      if (!left) {
        if (operator !== '-' && operator !== '+') throw new Refused(`the prefix operator ${operator} is not supported`);
        return { kind: 'unary', operator, operand: next(node['rexpr']) };
      }
      return { kind: 'binary', operator: operator === '!=' ? '<>' : operator, left, right: next(node['rexpr']) };
    case 'AEXPR_IN':
      return { kind: 'in', operand: left as Expr, list: listOf(node['rexpr']).map(next), negated: operator === '<>' };
    case 'AEXPR_BETWEEN': case 'AEXPR_NOT_BETWEEN': {
      const [low, high] = listOf(node['rexpr']).map(next) as [Expr, Expr];
      return { kind: 'between', operand: left as Expr, low, high, negated: kind === 'AEXPR_NOT_BETWEEN' };
    }
    case 'AEXPR_LIKE': case 'AEXPR_ILIKE':
      return { kind: 'like', operand: left as Expr, pattern: next(node['rexpr']), negated: operator.startsWith('!'), caseInsensitive: kind === 'AEXPR_ILIKE' };
    case 'AEXPR_DISTINCT': case 'AEXPR_NOT_DISTINCT':
      return { kind: 'distinctFrom', left: left as Expr, right: next(node['rexpr']), negated: kind === 'AEXPR_NOT_DISTINCT' };
    case 'AEXPR_NULLIF':
      return { kind: 'call', name: 'nullif', args: [left as Expr, next(node['rexpr'])], star: false, distinct: false, window: undefined };
    default:
      throw new Refused(`the ${kind.replace('AEXPR_', '').toLowerCase()} form is not part of the OSI expression subset`);
  }
}

/**
 * The OSI expression language's conditional functions (its "Conditional Functions (REQUIRED)") in the forms
 * every server has: IF/IFF as CASE, IFNULL/NVL as COALESCE, NVL2, ZEROIFNULL, NULLIFZERO.
 */
function conditional(name: string, args: Expr[]): Expr | undefined {
  const plain = (callName: string, callArgs: Expr[]): Expr => ({ kind: 'call', name: callName, args: callArgs, star: false, distinct: false, window: undefined });
  const arity = (count: number) => {
    if (args.length !== count) throw new Refused(`${name.toUpperCase()} takes ${count} arguments`);
    return args as [Expr, Expr, Expr];
  };
  switch (name) {
    case 'if': case 'iff': {
      const [when, then, otherwise] = arity(3);
      return { kind: 'case', operand: undefined, branches: [{ when, then }], otherwise };
    }
    case 'ifnull': case 'nvl': return plain('coalesce', arity(2).slice(0, 2));
    case 'nvl2': {
      const [value, then, otherwise] = arity(3);
      return { kind: 'case', operand: undefined, branches: [{ when: { kind: 'isNull', operand: value, negated: true }, then }], otherwise };
    }
    case 'zeroifnull': return plain('coalesce', [arity(1)[0], { kind: 'literal', value: 0 }]);
    case 'nullifzero': return plain('nullif', [arity(1)[0], { kind: 'literal', value: 0 }]);
    default: return undefined;
  }
}

/**
 * The OSI string search functions: `POSITION(s IN str)` (read by the parser as `pg_catalog.position(str, s)`)
 * and `CHARINDEX(s, str)`, `CONTAINS(str, s)`, `STARTSWITH(str, p)`, `ENDSWITH(str, p)` as positions.
 */
function stringSearch(name: string, args: Expr[]): Expr | undefined {
  const [first, second] = args as [Expr, Expr];
  const at = (needle: Expr, haystack: Expr, reversed = false): Expr => ({ kind: 'position', needle, haystack, reversed });
  const is = (operator: string, left: Expr, value: number): Expr => ({ kind: 'binary', operator, left, right: { kind: 'literal', value } });
  if (!['position', 'charindex', 'contains', 'startswith', 'endswith'].includes(name)) return undefined;
  if (args.length !== 2) throw new Refused(`${name.toUpperCase()} takes two arguments`);
  switch (name) {
    case 'position': return at(second, first);
    case 'charindex': return at(first, second);
    case 'contains': return is('>', at(second, first), 0);
    case 'startswith': return is('=', at(second, first), 1);
    default: return is('=', at(second, first, true), 1);
  }
}

/** The arities of each portable function (expression_language.md), by the name the dialect writes. */
const PORTABLE_ARITY: Readonly<Record<string, { name: Extract<Expr, { kind: 'portable' }>['name']; arities: readonly number[] }>> = {
  dateadd: { name: 'dateadd', arities: [3] }, datediff: { name: 'datediff', arities: [3] }, split_part: { name: 'split_part', arities: [3] },
  regexp_like: { name: 'regexp_like', arities: [2] }, regexp_extract: { name: 'regexp_extract', arities: [2] },
  regexp_replace: { name: 'regexp_replace', arities: [3] }, regexp_count: { name: 'regexp_count', arities: [2] },
  trunc: { name: 'trunc', arities: [1, 2] }, truncate: { name: 'trunc', arities: [1, 2] }, ceil: { name: 'ceil', arities: [1] }, ceiling: { name: 'ceil', arities: [1] },
  ln: { name: 'ln', arities: [1] }, log10: { name: 'log10', arities: [1] }, mod: { name: 'mod', arities: [2] }, atan2: { name: 'atan2', arities: [2] }, pi: { name: 'pi', arities: [0] },
};

/**
 * `DATEADD(unit, amount, date)`, `DATEDIFF(unit, start, end)` (the unit a bare word or a string), `SPLIT_PART`
 * and the regular expression functions; the dialect writes them.
 */
function portable(name: string, args: Expr[]): Expr | undefined {
  // LOG(base, x); LOG(x) alone is the base-10 logarithm on PostgreSQL, the natural one on MySQL: left as a call.
  const spec = name === 'log' && args.length === 2 ? { name: 'log' as const, arities: [2] } : Object.hasOwn(PORTABLE_ARITY, name) ? PORTABLE_ARITY[name] : undefined;
  if (!spec) return undefined;
  const known = spec.name;
  if (!spec.arities.includes(args.length)) throw new Refused(`${name.toUpperCase()} takes ${spec.arities.join(' or ')} arguments`);
  if (known !== 'dateadd' && known !== 'datediff') return { kind: 'portable', name: known, unit: undefined, args };
  const [first, ...rest] = args as [Expr, ...Expr[]];
  const word = first.kind === 'name' && first.parts.length === 1 ? first.parts[0] : first.kind === 'literal' && typeof first.value === 'string' ? first.value : undefined;
  const unit = DATE_UNITS.find((candidate) => candidate === word?.toLowerCase());
  if (!unit) throw new Refused(`${name.toUpperCase()}: the unit is one of ${DATE_UNITS.join(', ')}`);
  return { kind: 'portable', name: known, unit: unit as DateUnit, args: rest };
}

/**
 * `DATE_TRUNC('part', x)` to a day, week (from Monday), month, quarter or year, written as the dimensions'
 * grains are (decision 15); a finer part stays a call, for the servers that have the function.
 */
function truncation(name: string, args: Expr[]): Expr | undefined {
  const [part, operand] = args;
  if (name !== 'date_trunc' || args.length !== 2 || part?.kind !== 'literal' || typeof part.value !== 'string') return undefined;
  const grain = TIME_GRAINS.find((candidate) => candidate === (part.value as string).toLowerCase());
  return grain && { kind: 'truncate', grain, operand: operand as Expr };
}

/**
 * `APPROX_COUNT_DISTINCT(x)` computed exactly as `COUNT(DISTINCT x)`, `APPROX_PERCENTILE(x, p)` as
 * `PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)`: the language allows any method, and the exact answer is
 * within every error bound.
 */
function approximate(name: string, args: Expr[]): Expr | undefined {
  if (name === 'approx_count_distinct') {
    if (args.length !== 1) throw new Refused('APPROX_COUNT_DISTINCT takes one argument');
    return { kind: 'call', name: 'count', args, star: false, distinct: true, window: undefined };
  }
  if (name !== 'approx_percentile') return undefined;
  const [argument, fraction] = args;
  if (args.length !== 2 || fraction?.kind !== 'literal' || typeof fraction.value !== 'number' || fraction.value < 0 || fraction.value > 1) {
    throw new Refused('APPROX_PERCENTILE takes a value and a literal fraction from 0 to 1');
  }
  return { kind: 'call', name: 'percentile_cont', args: [fraction, argument as Expr], star: false, distinct: false, window: undefined };
}

/** `YEAR(x)` …, `EXTRACT(part FROM x)` (which the parser reads as `pg_catalog.extract('part', x)`), `DATE_PART('part', x)`. */
function datePart(name: string, args: Expr[]): Expr | undefined {
  const part = (text: string) => {
    const found = DATE_PARTS.find((candidate) => candidate === text.toLowerCase() || (candidate === 'dayofyear' && text.toLowerCase() === 'doy'));
    if (!found) throw new Refused(`the date part ${text} is not one of ${DATE_PARTS.join(', ')}`);
    return found;
  };
  if ((DATE_PARTS as readonly string[]).includes(name) && args.length === 1) return { kind: 'datePart', part: part(name), operand: args[0] as Expr };
  if (name !== 'extract' && name !== 'date_part') return undefined;
  const [named, operand] = args;
  if (args.length !== 2 || named?.kind !== 'literal' || typeof named.value !== 'string') throw new Refused(`${name.toUpperCase()} takes a date part and a value`);
  return { kind: 'datePart', part: part(named.value), operand: operand as Expr };
}

/**
 * `PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)` (and `_DISC`), the OSI expression language's percentiles:
 * read as the call `(p, x)`, `p` a literal fraction from 0 to 1, the order ascending.
 */
function withinGroup(node: Node, name: string, next: (child: unknown) => Expr): Expr | undefined {
  if (!node['agg_within_group'] || (name !== 'percentile_cont' && name !== 'percentile_disc')) return undefined;
  const args = ((node['args'] as unknown[] | undefined) ?? []).map(next);
  const order = (node['agg_order'] as Node[] | undefined) ?? [];
  const sort = order[0]?.['SortBy'] as Node | undefined;
  const [fraction] = args;
  if (node['agg_filter'] || node['over'] || args.length !== 1 || order.length !== 1 || !sort) throw new Refused(`${name}: it takes one fraction and one ORDER BY term`);
  if (fraction?.kind !== 'literal' || typeof fraction.value !== 'number' || fraction.value < 0 || fraction.value > 1) throw new Refused(`${name}: the fraction is a literal number from 0 to 1`);
  if (sort['sortby_dir'] === 'SORTBY_DESC') throw new Refused(`${name}: order ascending (the percentile 1 - p of a descending order)`);
  return { kind: 'call', name, args: [fraction, next(sort['node'])], star: false, distinct: false, window: undefined };
}

function call(node: Node, next: (child: unknown) => Expr): Expr {
  const qualified = (node['funcname'] as unknown[]).map(sval);
  // EXTRACT(part FROM x) and POSITION(s IN str) are SQL syntax the parser names in its catalog.
  const names = qualified.length === 2 && qualified[0] === 'pg_catalog' && ['extract', 'position'].includes(qualified[1] as string) ? [qualified[1] as string] : qualified;
  if (names.length !== 1) throw new Refused(`${names.join('.')}: a function is named without schema`);
  const within = withinGroup(node, (names[0] as string).toLowerCase(), next);
  if (within) return within;
  if (node['agg_filter'] || node['agg_order'] || node['agg_within_group'] || node['func_variadic']) {
    throw new Refused(`${names[0]}: FILTER, WITHIN GROUP, ORDER BY in a call and VARIADIC are not supported`);
  }
  const over = node['over'] as Node | undefined;
  let window: WindowSpec | undefined;
  if (over) {
    if (over['name'] !== undefined || over['refname'] !== undefined) throw new Refused('a named window is not supported');
    const frame = frameOf(over);
    window = {
      ...(frame ? { frame } : {}),
      partitionBy: ((over['partitionClause'] as unknown[] | undefined) ?? []).map(next),
      orderBy: ((over['orderClause'] as Node[] | undefined) ?? []).map((item) => {
        const sort = item['SortBy'] as Node;
        const nulls = sort['sortby_nulls'] === 'SORTBY_NULLS_FIRST' ? 'first' : sort['sortby_nulls'] === 'SORTBY_NULLS_LAST' ? 'last' : undefined;
        return { expression: next(sort['node']), direction: sort['sortby_dir'] === 'SORTBY_DESC' ? 'desc' as const : 'asc' as const, nulls };
      }),
    };
  }
  const name = (names[0] as string).toLowerCase();
  const args = ((node['args'] as unknown[] | undefined) ?? []).map(next);
  const rewritten = window || node['agg_star'] || node['agg_distinct'] ? undefined
    : conditional(name, args) ?? datePart(name, args) ?? stringSearch(name, args) ?? portable(name, args) ?? approximate(name, args) ?? truncation(name, args);
  return rewritten ?? { kind: 'call', name, args, star: Boolean(node['agg_star']), distinct: Boolean(node['agg_distinct']), window };
}

/** PostgreSQL's FRAMEOPTION_* bits (parsenodes.h), as libpg-query reports a window's frame. */
const FRAME = {
  nonDefault: 0x1, rows: 0x4, groups: 0x8, between: 0x10,
  start: { unboundedPreceding: 0x20, unboundedFollowing: 0x80, currentRow: 0x200, preceding: 0x800, following: 0x2000 },
  end: { unboundedPreceding: 0x40, unboundedFollowing: 0x100, currentRow: 0x400, preceding: 0x1000, following: 0x4000 },
  exclude: 0x8000 | 0x10000 | 0x20000,
} as const;

/**
 * The window's explicit frame: ROWS or RANGE with UNBOUNDED, CURRENT ROW or literal integer offsets, which
 * the Foundation requires (§6.10.6); GROUPS and offsets that are no integer literal are deferred there
 * (`E_DEFERRED_FRAME_MODE`). Undefined for the default frame.
 */
function frameOf(over: Node): WindowFrame | undefined {
  const options = Number(over['frameOptions'] ?? 0);
  if ((options & FRAME.nonDefault) === 0) return undefined;
  if (options & FRAME.groups) throw queryInvalid('E_DEFERRED_FRAME_MODE', 'window', 'a GROUPS frame is deferred by the OSI Foundation (§6.10.6); use ROWS or RANGE');
  if (options & FRAME.exclude) throw new Refused('EXCLUDE in a window frame is not supported');
  const bound = (side: 'start' | 'end'): FrameBound => {
    const bits = FRAME[side];
    if (options & bits.unboundedPreceding) return { kind: 'UNBOUNDED PRECEDING' };
    if (options & bits.unboundedFollowing) return { kind: 'UNBOUNDED FOLLOWING' };
    if (options & bits.currentRow) return { kind: 'CURRENT ROW' };
    const constant = (over[`${side}Offset`] as Node | undefined)?.['A_Const'] as Node | undefined;
    const integer = constant?.['ival'] as Node | undefined;
    // libpg-query leaves the value out for 0.
    const offset = integer === undefined ? undefined : Number(integer['ival'] ?? 0);
    if (offset === undefined || !Number.isSafeInteger(offset) || offset < 0) {
      throw queryInvalid('E_DEFERRED_FRAME_MODE', 'window', 'a frame bound must be a literal whole number (parameterised bounds are deferred by the OSI Foundation, §6.10.6)');
    }
    return { kind: options & bits.preceding ? 'PRECEDING' : 'FOLLOWING', offset };
  };
  return { mode: options & FRAME.rows ? 'ROWS' : 'RANGE', start: bound('start'), end: options & FRAME.between ? bound('end') : undefined };
}
