/**
 * Reads the body of a semantic query (JSON or YAML, already parsed) into a `SemanticQuery`, refusing any
 * other shape with `E_INVALID_QUERY` and the path of the bad part. Shorthands: a dimension may be the string
 * `dataset.field`, a measure a metric name or an expression, either with ` AS alias`, an order entry a name
 * (ascending) or `name DESC`. The Foundation's spelling is read too (§5.1.1 "Example semantic query"): the
 * body under `query:`, keys in any case, `order_by`.
 */
import {
  FILTER_OPERATORS, type FilterOperator, type QueryDimension, type QueryField, type QueryFilter, type QueryMeasure, type QueryOrder, type QueryPredicate,
  type SemanticQuery,
} from '../plugin-api/semantic-query.js';
import { TIME_GRAINS, type TimeGrain } from '../plugin-api/semantic-query-syntax.js';
import { queryInvalid } from './query-errors.js';

const KEYS = new Set(['dimensions', 'measures', 'where', 'having', 'orderBy', 'limit', 'offset', 'fields']);
/** Other spellings of the keys, lower case: the Foundation's `order_by`. */
const KEY_ALIASES = new Map([...[...KEYS].map((key): [string, string] => [key.toLowerCase(), key]), ['order_by', 'orderBy']]);
/** `<text> AS alias` at the end of a shorthand (Foundation §5.1 "Result-column naming": `orders.region AS order_region`). */
const AS_ALIAS = /^([\s\S]*\S)\s+AS\s+("?)([A-Za-z_][A-Za-z0-9_]*)\2\s*$/i;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const QUALIFIED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){1,2}$/;
/** Longer expressions are refused before parsing: no semantic question needs more. */
const MAX_EXPRESSION_LENGTH = 10_000;
const MAX_ENTRIES = 200;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function bad(target: string, message: string): Error {
  return queryInvalid('E_INVALID_QUERY', target, `${target}: ${message}`);
}

function listAt(body: Json, key: string): unknown[] {
  const value = body[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad(key, 'must be a list');
  if (value.length > MAX_ENTRIES) throw bad(key, `has more than ${MAX_ENTRIES} entries`);
  return value;
}

function text(value: unknown, target: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw bad(target, 'must be a non-empty string');
  if (value.length > MAX_EXPRESSION_LENGTH) throw bad(target, `is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  return value;
}

function onlyKeys(value: Json, keys: readonly string[], target: string): void {
  const extra = Object.keys(value).find((key) => !keys.includes(key));
  if (extra !== undefined) throw bad(target, `has the unknown key ${extra} (expected ${keys.join(', ')})`);
}

function optionalAlias(value: Json, target: string): { alias?: string } {
  if (value['alias'] === undefined) return {};
  const alias = text(value['alias'], `${target}.alias`);
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(alias)) throw bad(`${target}.alias`, 'must be an identifier (letters, digits, _) of at most 63 characters');
  return { alias };
}

/** A shorthand's text and its ` AS alias`, if it has one. */
function aliased(value: string, target: string): { text: string; alias?: string } {
  const match = AS_ALIAS.exec(text(value, target));
  if (!match) return { text: value.trim() };
  return { text: match[1] as string, ...optionalAlias({ alias: match[3] }, target) };
}

function dimension(value: unknown, index: number): QueryDimension {
  const target = `dimensions[${index}]`;
  if (typeof value === 'string') {
    const { text: field, alias } = aliased(value, target);
    return { field, ...(alias === undefined ? {} : { alias }) };
  }
  if (!isObject(value)) throw bad(target, 'must be `dataset.field` or { field, grain, alias }');
  onlyKeys(value, ['field', 'grain', 'alias'], target);
  const grain = value['grain'];
  if (grain !== undefined && !TIME_GRAINS.includes(grain as TimeGrain)) throw bad(`${target}.grain`, `must be one of ${TIME_GRAINS.join(', ')}`);
  return { field: text(value['field'], `${target}.field`), ...(grain === undefined ? {} : { grain: grain as TimeGrain }), ...optionalAlias(value, target) };
}

function measure(value: unknown, index: number): QueryMeasure {
  const target = `measures[${index}]`;
  if (typeof value === 'string') {
    // A bare name is a metric; anything else an expression (`SUM(orders.amount) AS total_revenue`, §6.8.2).
    const { text: body, alias } = aliased(value, target);
    return { ...(NAME.test(body) ? { metric: body } : { expression: body }), ...(alias === undefined ? {} : { alias }) };
  }
  if (!isObject(value)) throw bad(target, 'must be a metric name, { metric, alias } or { expression, alias }');
  onlyKeys(value, ['metric', 'expression', 'alias', 'name'], target);
  if (value['name'] !== undefined) {
    // `{name, expression}` as the model writes a metric: the name is the column's; `{name}` alone a metric.
    if (value['alias'] !== undefined || value['metric'] !== undefined) throw bad(target, 'has name beside alias or metric: write one');
    return measure(value['expression'] === undefined ? { metric: value['name'] } : { expression: value['expression'], alias: value['name'] }, index);
  }
  if ((value['metric'] === undefined) === (value['expression'] === undefined)) throw bad(target, 'needs exactly one of metric and expression');
  return value['metric'] !== undefined
    ? { metric: text(value['metric'], `${target}.metric`), ...optionalAlias(value, target) }
    : { expression: text(value['expression'], `${target}.expression`), ...optionalAlias(value, target) };
}

function scalarField(value: unknown, index: number): QueryField {
  const target = `fields[${index}]`;
  if (typeof value === 'string') {
    const { text: body, alias } = aliased(value, target);
    return { ...(QUALIFIED.test(body) ? { field: body } : { expression: body }), ...(alias === undefined ? {} : { alias }) };
  }
  if (!isObject(value)) throw bad(target, 'must be `dataset.field`, { field, alias } or { expression, alias }');
  onlyKeys(value, ['field', 'expression', 'alias'], target);
  if ((value['field'] === undefined) === (value['expression'] === undefined)) throw bad(target, 'needs exactly one of field and expression');
  return value['field'] !== undefined
    ? { field: text(value['field'], `${target}.field`), ...optionalAlias(value, target) }
    : { expression: text(value['expression'], `${target}.expression`), ...optionalAlias(value, target) };
}

function filter(value: Json, target: string): QueryFilter {
  onlyKeys(value, ['field', 'operator', 'values', 'value'], target);
  const operator = value['operator'];
  if (!FILTER_OPERATORS.includes(operator as FilterOperator)) throw bad(`${target}.operator`, `must be one of ${FILTER_OPERATORS.join(', ')}`);
  const raw = value['values'] ?? (value['value'] === undefined ? [] : [value['value']]);
  if (!Array.isArray(raw)) throw bad(`${target}.values`, 'must be a list');
  if (raw.length > MAX_ENTRIES) throw bad(`${target}.values`, `has more than ${MAX_ENTRIES} entries`);
  for (const [position, item] of raw.entries()) {
    if (item !== null && !['string', 'number', 'boolean'].includes(typeof item)) throw bad(`${target}.values[${position}]`, 'must be a string, number, boolean or null');
  }
  return { field: text(value['field'], `${target}.field`), operator: operator as FilterOperator, values: raw };
}

function predicate(body: Json, key: 'where' | 'having'): QueryPredicate | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return text(value, key);
  if (isObject(value)) return [filter(value, `${key}[0]`)];
  return listAt(body, key).map((item, index) => (isObject(item) ? filter(item, `${key}[${index}]`) : text(item, `${key}[${index}]`)));
}

function order(value: unknown, index: number): QueryOrder {
  const target = `orderBy[${index}]`;
  if (typeof value === 'string') {
    // `revenue DESC NULLS LAST`: the words at the end, as SQL writes them.
    const match = /^([\s\S]*?\S)(?:\s+(ASC|DESC))?(?:\s+NULLS\s+(FIRST|LAST))?\s*$/i.exec(text(value, target)) as RegExpExecArray;
    const nulls = match[3]?.toLowerCase() as 'first' | 'last' | undefined;
    return { field: match[1] as string, direction: match[2]?.toLowerCase() === 'desc' ? 'desc' : 'asc', ...(nulls === undefined ? {} : { nulls }) };
  }
  if (!isObject(value)) throw bad(target, 'must be a name or { field, direction, nulls }');
  onlyKeys(value, ['field', 'direction', 'nulls'], target);
  const direction = String(value['direction'] ?? 'asc').toLowerCase();
  if (direction !== 'asc' && direction !== 'desc') throw bad(`${target}.direction`, 'must be asc or desc');
  const nulls = value['nulls'] === undefined ? undefined : String(value['nulls']).toLowerCase();
  if (nulls !== undefined && nulls !== 'first' && nulls !== 'last') throw bad(`${target}.nulls`, 'must be first or last');
  return { field: text(value['field'], `${target}.field`), direction, ...(nulls === undefined ? {} : { nulls }) };
}

function count(body: Json, key: 'limit' | 'offset'): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw bad(key, 'must be a whole number, 0 or more');
  return value;
}

/** The body with its keys spelled as the service does: the Foundation's `query:` wrapper, any case, `order_by`. */
function normalKeys(body: unknown): Json {
  if (!isObject(body)) throw bad('body', 'must be a mapping with dimensions, measures, where, having, orderBy, limit, offset');
  const keys = Object.keys(body);
  const [only] = keys;
  if (keys.length === 1 && only?.toLowerCase() === 'query' && isObject(body[only])) return normalKeys(body[only]);
  const normal: Json = {};
  for (const key of keys) {
    const known = KEY_ALIASES.get(key.toLowerCase());
    if (known === undefined) throw bad(key, `is not a key of a semantic query (${[...KEYS].filter((name) => name !== 'fields').join(', ')})`);
    if (known in normal) throw bad(key, `is given twice (as ${key} and another spelling of ${known})`);
    normal[known] = body[key];
  }
  return normal;
}

export function readSemanticQuery(raw: unknown): SemanticQuery {
  const body = normalKeys(raw);
  const query: SemanticQuery = {
    dimensions: listAt(body, 'dimensions').map(dimension),
    measures: listAt(body, 'measures').map(measure),
    orderBy: listAt(body, 'orderBy').map(order),
  };
  const where = predicate(body, 'where');
  const having = predicate(body, 'having');
  const limit = count(body, 'limit');
  const offset = count(body, 'offset');
  if (where !== undefined) query.where = where;
  if (having !== undefined) query.having = having;
  if (limit !== undefined) query.limit = limit;
  if (offset !== undefined) query.offset = offset;
  const fields = listAt(body, 'fields').map(scalarField);
  const aggregation = query.dimensions.length + query.measures.length > 0;
  if (fields.length > 0 && aggregation) throw queryInvalid('E_MIXED_QUERY_SHAPE', 'fields', 'a query lists either fields (a scalar query) or dimensions and measures, not both');
  if (fields.length > 0) {
    // Having is a clause of the aggregation shape (§5.1.2 "No Measures, no Dimensions, no Having").
    if (query.having !== undefined) throw queryInvalid('E_MIXED_QUERY_SHAPE', 'having', 'a scalar query (fields) has no groups to filter: use where, or ask with dimensions and measures');
    return { ...query, fields };
  }
  if (!aggregation) {
    // §6.2 A.1 / B.1: a query that names fields (and no dimension or measure) is a scalar one.
    const scalar = body['fields'] !== undefined && body['dimensions'] === undefined && body['measures'] === undefined;
    if (scalar) throw queryInvalid('E_EMPTY_SCALAR_QUERY', 'fields', 'a scalar query needs at least one field');
    throw queryInvalid('E_EMPTY_AGGREGATION_QUERY', 'dimensions', 'a query needs at least one dimension or measure');
  }
  return query;
}
