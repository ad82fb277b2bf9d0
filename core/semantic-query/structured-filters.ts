/**
 * Structured filters (`{field, operator, values}`) as expressions. A value becomes a name the parser never
 * produces (it starts with NUL) and is written as a bound value taken from the query at run time, so the
 * compiled statement does not depend on the values and is cached per shape.
 */
import type { QueryFilter } from '../plugin-api/semantic-query.js';
import type { Expr } from './expression-ast.js';
import { queryInvalid } from './query-errors.js';
import type { Reference } from './query-plan.js';

export function filterExpression(filter: QueryFilter, clause: 'where' | 'having', entry: number): Expr {
  const operand: Expr = { kind: 'name', parts: filter.field.split('.') };
  const target = `${clause}[${entry}].values`;
  // A value is a name the parser never produces (it starts with NUL), resolved to a bound value from the query.
  const value = (position: number, form = 'value'): Expr => {
    if (position >= filter.values.length) throw queryInvalid('E_INVALID_QUERY', target, `${clause}[${entry}]: ${filter.operator} needs ${position + 1} value(s)`);
    return { kind: 'name', parts: [`\u0000${form}`, clause, String(entry), String(position)] };
  };
  const compare = (operator: string): Expr => ({ kind: 'binary', operator, left: operand, right: value(0) });
  switch (filter.operator) {
    // NULL equals nothing in SQL: a null value asks for IS [NOT] NULL (the cache key tells null values apart).
    case 'equals': return filter.values[0] === null ? { kind: 'isNull', operand, negated: false } : compare('=');
    case 'notEquals': return filter.values[0] === null ? { kind: 'isNull', operand, negated: true } : compare('<>');
    case 'gt': return compare('>');
    case 'gte': return compare('>=');
    case 'lt': return compare('<');
    case 'lte': return compare('<=');
    case 'in': case 'notIn':
      if (filter.values.length === 0) throw queryInvalid('E_INVALID_QUERY', target, `${clause}[${entry}]: ${filter.operator} needs at least one value`);
      return { kind: 'in', operand, list: filter.values.map((_value, position) => value(position)), negated: filter.operator === 'notIn' };
    case 'between': return { kind: 'between', operand, low: value(0), high: value(1), negated: false };
    case 'contains': case 'startsWith': case 'endsWith':
      return { kind: 'like', operand, pattern: value(0, filter.operator), negated: false, caseInsensitive: false, literal: true };
    case 'isNull': return { kind: 'isNull', operand, negated: false };
    case 'isNotNull': return { kind: 'isNull', operand, negated: true };
  }
}

/** A structured filter's value, bound from the query at run time; undefined for any other name. */
export function filterValue(parts: string[]): Reference | undefined {
  const [head, clause, entry, position] = parts;
  if (!head?.startsWith('\u0000')) return undefined;
  const value = { kind: 'filterValue' as const, clause: clause as 'where' | 'having', entry: Number(entry), value: Number(position) };
  const like = LIKE_FORMS[head.slice(1)];
  return like ? { ...value, like } : value;
}

/** Where each LIKE filter puts its wildcard around the (escaped) value. */
const LIKE_FORMS: Record<string, { before: boolean; after: boolean }> = {
  contains: { before: true, after: true },
  startsWith: { before: false, after: true },
  endsWith: { before: true, after: false },
};
