/**
 * The plan of a statement over several datasources of a VDB (docs/federation.md#the-plan): parsed as
 * PostgreSQL, each relation read from its source by a pushed statement in the source's dialect (the columns
 * used, the predicates on that relation alone that the source evaluates as PostgreSQL would, and, when the
 * other side of an equi-join is selective, that side's keys), the rest written for the engine.
 */
import { loadModule, parseSync, scanSync } from 'libpg-query';
import type { CatalogColumn } from '../plugin-api/catalog.js';
import { InputError, messageOf } from '../plugin-api/errors.js';
import type { Datasource } from '../plugin-api/sql-dialect.js';
import type { VdbRelation } from '../plugin-api/vdb.js';
import { withServerPlaceholders } from '../sql-grammar/server-placeholders.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { engineSql, outputName, ROW_MARK_COLUMN, unsupported, type EngineTable, type EngineType, type ExactParameter } from './engine-sql.js';
import { planShipping, type Shipping } from './shipping.js';

type PgObject = { [field: string]: unknown };

/** A relation the authorizer found, with the columns the statement reads of it. */
export interface ReadRelation {
  readonly schema: string;
  readonly name: string;
  readonly columns: readonly string[];
}

/**
 * A value of the request the plan binds where it stands: the `index`th bound value. A plan holds these, not
 * the values, so that it is made once per text and shape of values and run with each request's (plan-cache.ts).
 */
export class BoundValue {
  constructor(readonly index: number) {}
}

/** The request's bound values, and the position among them of a statement's `$n` (the engine's statement is renumbered). */
interface BoundValues {
  readonly values: readonly unknown[];
  readonly position: (number: number) => number;
}

/** A predicate pushed to a source: its text in the source's dialect (`?` per value) and its values (constants or `BoundValue`s). */
interface PushedPredicate {
  readonly sql: string;
  readonly bindings: readonly unknown[];
}

/** One relation read from its source. */
export interface SourceScan {
  readonly relation: VdbRelation;
  readonly datasource: Datasource;
  /** The engine's table holding its rows. */
  readonly table: string;
  /** The columns read, in the relation's order; empty: only the number of rows matters (`count(*)`). */
  readonly columns: readonly CatalogColumn[];
  readonly engineTypes: readonly EngineType[];
  readonly predicates: readonly PushedPredicate[];
  /** Read after `driver`, restricted to the keys its rows hold in `driverColumn` where they are few. */
  readonly dependent?: { readonly driver: number; readonly driverColumn: string; readonly column: CatalogColumn };
  /** Several relations of the source joined, or aggregated, by one pushed statement; `columns` are its outputs. */
  readonly fragment?: PushedFragment;
  /**
   * Expected to be a few rows (a unique key's equality, a dependent join's keys, an aggregation's groups):
   * read by one statement, not a cursor, within a share of the transit budget (a cursor reads it when it is more).
   */
  readonly small?: true;
}

/**
 * A join among relations of one source, or a (partial) aggregation over them, pushed as one statement
 * (docs/federation.md#the-plan). Its output columns are named `alias.column` (a member's column) or
 * `vdb_agg_n` (a partial aggregate).
 */
export interface PushedFragment {
  /** The FROM clause in the source's dialect: the members, and a left join's condition with its values. */
  readonly from: PushedPredicate;
  /** The join conditions among the members (the filters are the scan's `predicates`). */
  readonly joins: readonly PushedPredicate[];
  /** The select list in the source's dialect, each item named as its engine column. */
  readonly select: readonly string[];
  /** GROUP BY items where the fragment is aggregated. */
  readonly groupBy: readonly string[];
  /**
   * Output columns a dependent join may restrict: the member column as it is, and as the source compares it
   * with PostgreSQL's semantics (text byte-wise), before any grouping.
   */
  readonly keys: ReadonlyMap<string, { readonly plain: string; readonly compared: string }>;
}

/** What runs where: a statement per relation on its source, and the engine's statement over their rows. */
export interface FederatedPlan {
  readonly scans: readonly SourceScan[];
  readonly engineSql: string;
  /**
   * The engine statement's bound values, in its `$n` order, as positions among the request's values: its
   * own, less those only a pushed join or aggregation reads.
   */
  readonly parameters: readonly number[];
  /** The result columns that are a numeric division (an `avg`, a `/`): the engine answers `{a, b}`, divided as PostgreSQL divides. */
  readonly quotients: readonly number[];
  /** The statement was `EXPLAIN <query>`: its answer is the plan (`explainFederated`), nothing runs. */
  readonly explain: boolean;
  /** Where the other scans' rows may be sent to one source, which then answers the whole statement (shipping.ts). */
  readonly shipping?: Shipping;
  /** The engine statement's `$n` read beside a number: bound as text checked for the type PostgreSQL reads (engine-sql.ts). */
  readonly exactParameters: readonly ExactParameter[];
}


const PUSHABLE_TYPES = new Set<EngineType>(['integer', 'bigint', 'decimal', 'numeric', 'string', 'date']);
const KEY_TYPES = new Set<EngineType>(['integer', 'bigint', 'string', 'date', 'uuid']);
const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);
const FLIPPED: Readonly<Record<string, string>> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '=': '=', '<>': '<>', '!=': '<>' };

/**
 * Plans `sql` (`?` per bound value) over `relations`, the relations the authorizer allowed it to read.
 * @throws InputError `federation_unsupported` for a statement the plan cannot evaluate with PostgreSQL's semantics.
 */
export async function planFederated(
  handle: VdbHandle, sql: string, bindings: readonly unknown[], relations: readonly ReadRelation[],
): Promise<FederatedPlan> {
  await loadModule();
  const text = withServerPlaceholders(sql, { numbered: (n) => `$${n}`, escapedQuestionMark: true });
  if (typeof text !== 'string') throw new InputError('federation_unsupported', text.reason, { details: { construct: '??' } });
  let statement: PgObject;
  try {
    const statements = parseSync(text).stmts ?? [];
    if (statements.length !== 1) throw unsupported('several statements');
    statement = (statements[0] as PgObject).stmt as PgObject;
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError('federation_unsupported', `the statement cannot be parsed as PostgreSQL: ${messageOf(error)}`, { details: { construct: 'syntax' } });
  }
  let [type, select] = Object.entries(statement)[0] as [string, PgObject];
  const explain = type === 'ExplainStmt';
  if (explain) {
    // EXPLAIN answers the plan; EXPLAIN ANALYZE and other options would need the engine's own plan
    if (list(select.options).length > 0) throw unsupported('EXPLAIN with options');
    [type, select] = Object.entries(select.query as PgObject)[0] as [string, PgObject];
  }
  if (type !== 'SelectStmt') throw unsupported(`${type.replace(/Stmt$/, '').toUpperCase()} over several datasources`);

  const base = distinct(relations).map((read, index) => scanOf(handle, read, index));
  // the engine's statement is written from a copy in which each pushed join or aggregation is one relation
  select = structuredClone(select);
  const fragments = pushFragments(select, base, { values: bindings, position: (number) => number - 1 });
  // values read only by conditions pushed into a fragment are gone from the engine's statement: renumbered
  const parameters = fragments.scans.length === 0 ? bindings.map((_, index) => index) : renumberParameters(select);
  const scans = [...base.filter((_, index) => !fragments.absorbed.has(index)), ...fragments.scans];
  const lookup = (schema: string | undefined, name: string): number | undefined => {
    const fragment = schema === undefined ? fragments.tables.get(name) : undefined;
    if (fragment !== undefined) return scans.length - fragments.scans.length + fragment;
    const candidates = scans.flatMap((scan, index) => (scan.fragment === undefined ? [{ relation: scan.relation, index }] : []));
    return findScan(candidates, schema, name)?.index;
  };
  const tables = (schema: string | undefined, name: string): EngineTable | undefined => {
    const index = lookup(schema, name);
    const scan = index === undefined ? undefined : scans[index];
    if (scan === undefined) return undefined;
    const columns = scan.columns.length === 0
      ? new Map<string, EngineType>([[ROW_MARK_COLUMN, 'integer']])
      : new Map(scan.columns.map((column, position) => [column.name, scan.engineTypes[position] as EngineType]));
    return { table: scan.table, columns };
  };
  const engine = engineSql(select, { table: tables });
  // the engine's statement is renumbered: its `$n` is the request's value at parameters[n - 1]
  const pushed = pushdown(select, scans, { values: bindings, position: (number) => parameters[number - 1] as number }, lookup);
  const quotients = engine.outputs.flatMap((output, index) => (output.quotient ? [index] : []));
  const shipping = handle.federation.shipMaxRows > 0 ? shippingOf(handle, text, explain ? undefined : statement, base, pushed) : undefined;
  return { scans: pushed, engineSql: engine.sql, parameters, quotients, explain, exactParameters: engine.exactParameters, ...(shipping && { shipping }) };
}

/** The plan's shipping (shipping.ts), planned on the query itself where the statement is its EXPLAIN. */
function shippingOf(handle: VdbHandle, text: string, root: PgObject | undefined, base: readonly SourceScan[], scans: readonly SourceScan[]): Shipping | undefined {
  let query = text;
  if (root === undefined) {
    const [, first] = scanSync(text).tokens;
    if (first === undefined) return undefined;
    query = Buffer.from(text, 'utf8').subarray(first.start).toString('utf8');
  }
  const parsed = root ?? ((parseSync(query).stmts?.[0] as PgObject | undefined)?.stmt as PgObject | undefined);
  if (parsed === undefined) return undefined;
  const shippingScans = scans.map((scan) => ({
    relation: scan.relation, datasource: scan.datasource, columns: scan.columns, engineTypes: scan.engineTypes,
    fragment: scan.fragment !== undefined, small: scan.small === true, dependentOn: scan.dependent?.driver,
  }));
  return planShipping(query, parsed, shippingScans, handle.datasource.name, (schema, name) => findScan(base, schema, name)?.relation);
}

/** The pushed statement of a scan, as it runs with the request's `values`: the predicates and, for a dependent scan, its keys. */
export function sourceStatement(scan: SourceScan, values: readonly unknown[], keys?: readonly unknown[]): { sql: string; bindings: unknown[] } {
  if (scan.fragment !== undefined) return fragmentStatement(scan, scan.fragment, values, keys);
  const { dialect } = scan.datasource;
  const quote = (name: string) => dialect.quoteIdentifier(name);
  const columns = scan.columns.length === 0 ? `1 AS ${quote(ROW_MARK_COLUMN)}` : scan.columns.map((column) => quote(column.name)).join(', ');
  const conditions = scan.predicates.map((predicate) => predicate.sql);
  const bound = bindingsOf(scan.predicates, values);
  if (keys !== undefined && scan.dependent !== undefined && dialect.pushdown !== undefined) {
    const { column } = scan.dependent;
    // a text key: the column's own comparison (which an index serves) narrows, the bytes decide
    const targets = column.logicalType === 'string' ? [dialect.quoteIdentifier(column.name), keyColumn(scan, column)] : [keyColumn(scan, column)];
    for (const target of targets) {
      const match = dialect.pushdown.anyOf(target, keys);
      conditions.push(match.sql);
      bound.push(...match.bindings);
    }
  }
  const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  return { sql: `SELECT ${columns} FROM ${quote(scan.relation.schema)}.${quote(scan.relation.name)}${where}`, bindings: bound };
}

/** The values of `predicates`, each `BoundValue` replaced by the request's value. */
function bindingsOf(predicates: readonly PushedPredicate[], values: readonly unknown[]): unknown[] {
  return predicates.flatMap((predicate) => predicate.bindings.map((value) => (value instanceof BoundValue ? values[value.index] : value)));
}

/** The engine's type for a column as the source describes it; columns the engine cannot hold exactly are refused. */
export function engineTypeOf(column: CatalogColumn, relation: VdbRelation): { type: EngineType; sql: string } {
  const subject = `column ${relation.schema}.${relation.name}.${column.name}`;
  switch (column.logicalType) {
    case 'string':
      // PostgreSQL's blank-padded char(n), held padded as it reads it; MySQL's CHAR loses its padding as it is read
      if (/^(character|bpchar)(\(\d+\))?$/i.test(column.nativeType)) return { type: 'char', sql: 'VARCHAR' };
      if (/^char(\(\d+\))?$/i.test(column.nativeType)) throw unsupported(`${subject} of type ${column.nativeType} (its value is read without the padding PostgreSQL's char(n) keeps)`);
      return { type: 'string', sql: 'VARCHAR' };
    case 'integer': return /unsigned/i.test(column.nativeType) ? { type: 'bigint', sql: 'BIGINT' } : { type: 'integer', sql: 'INTEGER' };
    case 'bigint': return /unsigned/i.test(column.nativeType) ? { type: 'decimal', sql: 'DECIMAL(20,0)' } : { type: 'bigint', sql: 'BIGINT' };
    case 'decimal': {
      const match = /\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)/.exec(column.nativeType);
      const precision = Number(match?.[1] ?? 0);
      if (match === null) return { type: 'numeric', sql: `DECIMAL(38,${UNCONSTRAINED_SCALE})` };
      if (precision > 38) throw unsupported(`${subject} of type ${column.nativeType} (more than 38 digits)`);
      return { type: 'decimal', sql: `DECIMAL(${precision},${Number(match[2] ?? 0)})` };
    }
    case 'float':
      // PostgreSQL computes and compares a real in single precision (0.1::real <> 0.1); the engine would in double
      if (/^(real|float4|float(\(\d+(,\d+)?\))?( unsigned)?)$/i.test(column.nativeType)) throw unsupported(`${subject} of type ${column.nativeType} (a single-precision float)`);
      return { type: 'float', sql: 'DOUBLE' };
    case 'boolean': return { type: 'boolean', sql: 'BOOLEAN' };
    case 'date': return { type: 'date', sql: 'DATE' };
    case 'time': return { type: 'time', sql: 'TIME' };
    case 'timestamp': return column.withTimeZone === true ? { type: 'timestamptz', sql: 'TIMESTAMPTZ' } : { type: 'timestamp', sql: 'TIMESTAMP' };
    case 'uuid': return { type: 'uuid', sql: 'UUID' };
    default: throw unsupported(`${subject} of type ${column.nativeType}`);
  }
}

/** The scale an unconstrained numeric column is held at; a value with more fractional digits is refused as it loads. */
export const UNCONSTRAINED_SCALE = 12;

/** The explain answer of a federated plan: each source's statement, bound values elided, and the engine's. */
export function explainFederated(plan: FederatedPlan): {
  sources: { datasource: string; sql: string; dependentOn?: string }[]; engine: { sql: string }; shipping?: { datasource: string; sql: string; shipped: string[] };
} {
  const { shipping } = plan;
  return {
    sources: plan.scans.map((scan) => {
      const { sql } = sourceStatement(scan, [], scan.dependent === undefined ? undefined : [null]);
      const driver = scan.dependent === undefined ? undefined : plan.scans[scan.dependent.driver];
      return { datasource: scan.relation.datasource, sql, ...(driver && { dependentOn: driver.relation.datasource }) };
    }),
    engine: { sql: plan.engineSql },
    ...(shipping && {
      shipping: {
        datasource: shipping.datasource.name, sql: shipping.sql,
        shipped: shipping.shipped.map((index) => {
          const { relation } = plan.scans[index] as SourceScan;
          return `${relation.datasource}: ${relation.schema}.${relation.name}`;
        }),
      },
    }),
  };
}

/** Each relation once, with every column the statement reads of it. */
function distinct(relations: readonly ReadRelation[]): ReadRelation[] {
  const byName = new Map<string, { schema: string; name: string; columns: string[] }>();
  for (const relation of relations) {
    const key = `${relation.schema}.${relation.name}`;
    const known = byName.get(key);
    if (known === undefined) byName.set(key, { schema: relation.schema, name: relation.name, columns: [...relation.columns] });
    else known.columns.push(...relation.columns.filter((column) => !known.columns.includes(column)));
  }
  return [...byName.values()];
}

function scanOf(handle: VdbHandle, read: ReadRelation, index: number): SourceScan {
  const relation = handle.relation(`${read.schema}.${read.name}`);
  if (relation === undefined) throw unsupported(`relation ${read.schema}.${read.name}`);
  const used = new Set(read.columns);
  const columns = relation.columns.filter((column) => used.has(column.name));
  const typed = columns.map((column) => engineTypeOf(column, relation));
  return {
    relation, datasource: handle.datasourceOf(relation), table: `r${index + 1}`, columns,
    engineTypes: typed.map((type) => type.type), predicates: [],
  };
}

function findScan<S extends { relation: VdbRelation }>(scans: readonly S[], schema: string | undefined, name: string): S | undefined {
  const matches = (exact: boolean) => scans.filter((scan) => {
    const same = (a: string, b: string) => (exact ? a === b : a.toLowerCase() === b.toLowerCase());
    return same(scan.relation.name, name) && (schema === undefined || same(scan.relation.schema, schema));
  });
  const exact = matches(true);
  if (exact.length > 0) return exact.length === 1 ? exact[0] : undefined;
  const folded = matches(false);
  return folded.length === 1 ? folded[0] : undefined;
}

function unwrap(node: unknown): [string, PgObject] {
  const [type, value] = Object.entries((node ?? {}) as PgObject)[0] ?? ['', {}];
  return [type, value as PgObject];
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A range of the top-level FROM whose rows every answer row comes from (not the nullable side of an outer join). */
interface InnerRange {
  readonly alias: string;
  readonly scan: number;
}

/**
 * Adds to each scan the predicates of the top-level WHERE that read only its relation, and marks the
 * dependent scans. Only relations read once, from the top level, outside the nullable side of an outer join:
 * elsewhere a predicate does not filter their rows. A pushed predicate stays in the engine's statement too,
 * so pushing one only ever reads fewer rows that could not have matched.
 */
function pushdown(select: PgObject, scans: readonly SourceScan[], bindings: BoundValues, lookup: ScanLookup): SourceScan[] {
  const result = [...scans];
  if (select.op !== undefined && select.op !== 'SETOP_NONE') return result;
  const references = countRangeVars(select);
  const ranges: InnerRange[] = [];
  const joinQuals: unknown[] = [];
  for (const item of list(select.fromClause)) collectInner(item, lookup, references, ranges, joinQuals);
  const conjuncts = [...splitAnd(select.whereClause), ...joinQuals.flatMap(splitAnd)];
  const pushedPredicates = new Map<number, PushedPredicate[]>();
  const keyed = new Set<number>();
  for (const conjunct of splitAnd(select.whereClause)) {
    const pushed = pushablePredicate(conjunct, ranges, scans, bindings);
    // a fragment's own predicates were pushed as it was made
    if (pushed === undefined || (scans[pushed.scan] as SourceScan).fragment !== undefined) continue;
    pushedPredicates.set(pushed.scan, [...(pushedPredicates.get(pushed.scan) ?? []), pushed.predicate]);
    if (pushed.uniqueKey === true) keyed.add(pushed.scan);
  }
  for (const [index, predicates] of pushedPredicates) result[index] = { ...(result[index] as SourceScan), predicates, ...(keyed.has(index) && { small: true as const }) };
  // dependent joins: a scan with pushed predicates drives the scan of another source it is equi-joined to
  for (const conjunct of conjuncts) {
    const edge = equiJoin(conjunct, ranges, scans);
    if (edge === undefined) continue;
    for (const [driver, driven] of [[edge.left, edge.right], [edge.right, edge.left]] as const) {
      const driverScan = result[driver.scan] as SourceScan;
      const drivenScan = result[driven.scan] as SourceScan;
      if (driverScan.predicates.length === 0 || drivenScan.predicates.length > 0 || drivenScan.dependent !== undefined) continue;
      if (driverScan.dependent !== undefined || drivenScan.datasource.dialect.pushdown === undefined) continue;
      // a fragment's keys are its members' columns; a partial aggregate is no key
      if (drivenScan.fragment !== undefined && !drivenScan.fragment.keys.has(driven.column.name)) continue;
      // a run collects one column's keys per driver (federated-run.ts): its other dependents are read whole
      if (result.some((other) => other.dependent?.driver === driver.scan && other.dependent.driverColumn !== driver.column.name)) continue;
      result[driven.scan] = { ...drivenScan, dependent: { driver: driver.scan, driverColumn: driver.column.name, column: driven.column } };
      break;
    }
  }
  return result;
}

/** Each name of a relation (or CTE) in the statement, with the schema of each time it is named (none: unqualified). */
type RangeNames = ReadonlyMap<string, readonly (string | undefined)[]>;

function countRangeVars(node: unknown, names = new Map<string, (string | undefined)[]>()): Map<string, (string | undefined)[]> {
  if (Array.isArray(node)) {
    for (const item of node) countRangeVars(item, names);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node as PgObject)) {
      if (key === 'RangeVar') {
        const range = value as PgObject;
        const name = String(range.relname).toLowerCase();
        const schemas = names.get(name) ?? [];
        schemas.push(range.schemaname === undefined ? undefined : String(range.schemaname).toLowerCase());
        names.set(name, schemas);
      } else {
        countRangeVars(value, names);
      }
    }
  }
  return names;
}

/**
 * Whether `schema.name` is named once in the statement: `crm.users` and `shop.users` are two relations, but an
 * unqualified `users` could be either (or a CTE), so it counts for both.
 */
function namedOnce(names: RangeNames, schema: string | undefined, name: string): boolean {
  const folded = schema?.toLowerCase();
  const times = (names.get(name.toLowerCase()) ?? []).filter((named) => named === undefined || folded === undefined || named === folded);
  return times.length === 1;
}

/** The index of the scan a relation reference reads (a pushed fragment by its engine name), if any. */
type ScanLookup = (schema: string | undefined, name: string) => number | undefined;

function collectInner(item: unknown, lookup: ScanLookup, references: RangeNames, ranges: InnerRange[], quals: unknown[]): void {
  const [type, node] = unwrap(item);
  if (type === 'RangeVar') {
    const name = String(node.relname);
    const schema = node.schemaname === undefined ? undefined : String(node.schemaname);
    if (!namedOnce(references, schema, name)) return;
    const scan = lookup(schema, name);
    if (scan === undefined) return;
    if (node.alias !== undefined && list((node.alias as PgObject).colnames).length > 0) return;
    ranges.push({ alias: node.alias === undefined ? name : String((node.alias as PgObject).aliasname), scan });
    return;
  }
  if (type !== 'JoinExpr' || node.isNatural === true) return;
  if (node.jointype === 'JOIN_INNER') {
    collectInner(node.larg, lookup, references, ranges, quals);
    collectInner(node.rarg, lookup, references, ranges, quals);
    if (node.quals !== undefined && list(node.usingClause).length === 0) quals.push(node.quals);
  } else if (node.jointype === 'JOIN_LEFT') {
    collectInner(node.larg, lookup, references, ranges, []);
  } else if (node.jointype === 'JOIN_RIGHT') {
    collectInner(node.rarg, lookup, references, ranges, []);
  }
}

function splitAnd(node: unknown): unknown[] {
  if (node === undefined) return [];
  const [type, value] = unwrap(node);
  if (type === 'BoolExpr' && value.boolop === 'AND_EXPR') return list(value.args).flatMap(splitAnd);
  return [node];
}

/** A column reference of an inner range: the range and the catalog column. */
interface RangeColumn {
  readonly scan: number;
  /** The range's name in the statement, which a pushed join qualifies its columns with. */
  readonly alias: string;
  readonly column: CatalogColumn;
  readonly type: EngineType;
}

function rangeColumn(node: unknown, ranges: readonly InnerRange[], scans: readonly SourceScan[]): RangeColumn | undefined {
  const [type, value] = unwrap(node);
  if (type !== 'ColumnRef') return undefined;
  const fields = list(value.fields).map((field) => {
    const [fieldType, fieldValue] = unwrap(field);
    return fieldType === 'String' ? String(fieldValue.sval) : undefined;
  });
  if (fields.some((field) => field === undefined) || fields.length > 2) return undefined;
  const name = fields[fields.length - 1] as string;
  const candidates = fields.length === 2
    ? ranges.filter((range) => range.alias === fields[0])
    // unqualified: only when exactly one relation of the whole statement has the column
    : scans.some((scan, index) => !ranges.some((range) => range.scan === index) && scan.relation.columns.some((column) => column.name === name))
      ? []
      : ranges.filter((range) => (scans[range.scan] as SourceScan).relation.columns.some((column) => column.name === name));
  if (candidates.length !== 1) return undefined;
  const range = candidates[0] as InnerRange;
  const scan = scans[range.scan] as SourceScan;
  const position = scan.columns.findIndex((column) => column.name === name);
  if (position < 0) return undefined;
  return { scan: range.scan, alias: range.alias, column: scan.columns[position] as CatalogColumn, type: scan.engineTypes[position] as EngineType };
}

/** A constant or bound value the source can compare with a column of `type`, as its bound value. */
function pushableValue(node: unknown, type: EngineType, bindings: BoundValues): { value: unknown } | undefined {
  const [kind, value] = unwrap(node);
  if (kind === 'ParamRef') {
    // pushed or not by the value's JavaScript type: a plan is cached per text and those types (plan-cache.ts)
    const index = bindings.position(Number(value.number));
    const bound = bindings.values[index];
    if (bound === null || bound === undefined) return undefined;
    if (type === 'string' ? typeof bound === 'string' : typeof bound === 'number' || typeof bound === 'string') return { value: new BoundValue(index) };
    return undefined;
  }
  if (kind !== 'A_Const' || value.isnull === true) return undefined;
  if (value.ival !== undefined && (type === 'integer' || type === 'bigint' || type === 'decimal' || type === 'numeric')) return { value: Number((value.ival as PgObject).ival ?? 0) };
  if (value.fval !== undefined && (type === 'decimal' || type === 'numeric' || ((type === 'integer' || type === 'bigint') && /^\d+$/.test(String((value.fval as PgObject).fval))))) {
    return { value: String((value.fval as PgObject).fval) };
  }
  if (value.sval !== undefined) {
    const text = String((value.sval as PgObject).sval ?? '');
    if (type === 'string') return { value: text };
    if (type === 'date' && /^\d{4}-\d{2}-\d{2}$/.test(text)) return { value: text };
  }
  return undefined;
}

/** A column as its source compares it with PostgreSQL's semantics: text byte-wise; qualified by `alias` in a pushed join. */
function keyColumn(scan: SourceScan, column: CatalogColumn, alias?: string): string {
  const { dialect } = scan.datasource;
  const quoted = qualified(dialect, column.name, alias);
  return column.logicalType === 'string' && dialect.pushdown !== undefined ? dialect.pushdown.byteWiseText(quoted) : quoted;
}

function qualified(dialect: Datasource['dialect'], column: string, alias: string | undefined): string {
  return alias === undefined ? dialect.quoteIdentifier(column) : `${dialect.quoteIdentifier(alias)}.${dialect.quoteIdentifier(column)}`;
}

/** A conjunct a source evaluates as PostgreSQL would, on one relation; its columns qualified by their range in a pushed join. */
function pushablePredicate(
  node: unknown, ranges: readonly InnerRange[], scans: readonly SourceScan[], bindings: BoundValues, inJoin = false,
): { scan: number; predicate: PushedPredicate; uniqueKey?: true } | undefined {
  const [type, value] = unwrap(node);
  const columnOf = (operand: unknown) => {
    const found = rangeColumn(operand, ranges, scans);
    if (found === undefined || !PUSHABLE_TYPES.has(found.type)) return undefined;
    // text is compared byte-wise on the source, which only a dialect that says how can do
    if (found.type === 'string' && (scans[found.scan] as SourceScan).datasource.dialect.pushdown === undefined) return undefined;
    return found;
  };
  const text = (found: RangeColumn) => keyColumn(scans[found.scan] as SourceScan, found.column, inJoin ? found.alias : undefined);
  // equal bytes are equal in every collation: the column's own comparison (which an index serves) narrows first
  const textEquality = (found: RangeColumn, test: string, values: unknown[]): PushedPredicate => ({
    sql: `${qualified((scans[found.scan] as SourceScan).datasource.dialect, found.column.name, inJoin ? found.alias : undefined)} ${test} AND ${text(found)} ${test}`,
    bindings: [...values, ...values],
  });
  if (type === 'NullTest' && value.argisrow !== true) {
    const found = columnOf(value.arg);
    if (found === undefined) return undefined;
    const quoted = qualified((scans[found.scan] as SourceScan).datasource.dialect, found.column.name, inJoin ? found.alias : undefined);
    return { scan: found.scan, predicate: { sql: `${quoted} IS ${value.nulltesttype === 'IS_NOT_NULL' ? 'NOT ' : ''}NULL`, bindings: [] } };
  }
  if (type !== 'A_Expr') return undefined;
  const op = list(value.name).map((item) => String(unwrap(item)[1].sval)).at(-1) ?? '';
  if (value.kind === 'AEXPR_OP' && COMPARISONS.has(op)) {
    let found = columnOf(value.lexpr);
    let other = value.rexpr;
    let operator = op === '!=' ? '<>' : op;
    if (found === undefined) {
      found = columnOf(value.rexpr);
      other = value.lexpr;
      operator = FLIPPED[op] as string;
    }
    if (found === undefined) return undefined;
    const constant = pushableValue(other, found.type, bindings);
    if (constant === undefined) return undefined;
    // an equality on a key of one column selects at most one row
    const uniqueKey = operator === '=' && isUniqueKey((scans[found.scan] as SourceScan).relation, found.column.name) ? { uniqueKey: true as const } : {};
    if (operator === '=' && found.type === 'string') return { scan: found.scan, predicate: textEquality(found, `= ?`, [constant.value]), ...uniqueKey };
    return { scan: found.scan, predicate: { sql: `${text(found)} ${operator} ?`, bindings: [constant.value] }, ...uniqueKey };
  }
  if (value.kind === 'AEXPR_IN' && op === '=') {
    const found = columnOf(value.lexpr);
    if (found === undefined) return undefined;
    const items = list(unwrap(value.rexpr)[1].items).map((item) => pushableValue(item, found.type, bindings));
    if (items.length === 0 || items.some((item) => item === undefined)) return undefined;
    const values = items.map((item) => item?.value);
    if (found.type === 'string') return { scan: found.scan, predicate: textEquality(found, `IN (${items.map(() => '?').join(', ')})`, values) };
    return { scan: found.scan, predicate: { sql: `${text(found)} IN (${items.map(() => '?').join(', ')})`, bindings: values } };
  }
  if (value.kind === 'AEXPR_BETWEEN') {
    const found = columnOf(value.lexpr);
    if (found === undefined) return undefined;
    const items = list(unwrap(value.rexpr)[1].items).map((item) => pushableValue(item, found.type, bindings));
    if (items.length !== 2 || items.some((item) => item === undefined)) return undefined;
    return { scan: found.scan, predicate: { sql: `${text(found)} BETWEEN ? AND ?`, bindings: items.map((item) => item?.value) } };
  }
  return undefined;
}

/** Whether `column` alone is the relation's primary key or one of its unique keys. */
function isUniqueKey(relation: VdbRelation, column: string): boolean {
  return [relation.primaryKey, ...relation.uniqueKeys].some((key) => key.length === 1 && key[0] === column);
}

function equiJoin(node: unknown, ranges: readonly InnerRange[], scans: readonly SourceScan[]): { left: RangeColumn; right: RangeColumn } | undefined {
  const [type, value] = unwrap(node);
  if (type !== 'A_Expr' || value.kind !== 'AEXPR_OP') return undefined;
  const op = list(value.name).map((item) => String(unwrap(item)[1].sval)).at(-1);
  if (op !== '=') return undefined;
  const left = rangeColumn(value.lexpr, ranges, scans);
  const right = rangeColumn(value.rexpr, ranges, scans);
  if (left === undefined || right === undefined || left.scan === right.scan) return undefined;
  if ((scans[left.scan] as SourceScan).relation.datasource === (scans[right.scan] as SourceScan).relation.datasource) return undefined;
  if (!KEY_TYPES.has(left.type) || !KEY_TYPES.has(right.type)) return undefined;
  const integral = (candidate: EngineType) => candidate === 'integer' || candidate === 'bigint';
  if (left.type !== right.type && !(integral(left.type) && integral(right.type))) return undefined;
  return { left, right };
}


/** The statement of a pushed join or aggregation, with a dependent join's keys where it has them. */
function fragmentStatement(scan: SourceScan, fragment: PushedFragment, bound: readonly unknown[], keys?: readonly unknown[]): { sql: string; bindings: unknown[] } {
  const { dialect } = scan.datasource;
  const conditions = [...fragment.joins, ...scan.predicates];
  const values = bindingsOf([fragment.from, ...conditions], bound);
  const where = conditions.map((condition) => condition.sql);
  const key = scan.dependent === undefined ? undefined : fragment.keys.get(scan.dependent.column.name);
  if (keys !== undefined && key !== undefined && dialect.pushdown !== undefined) {
    for (const target of [key.plain, key.compared].filter((text, index, all) => all.indexOf(text) === index)) {
      const match = dialect.pushdown.anyOf(target, keys);
      where.push(match.sql);
      values.push(...match.bindings);
    }
  }
  const select = fragment.select.length === 0 ? [`1 AS ${dialect.quoteIdentifier(ROW_MARK_COLUMN)}`] : fragment.select;
  const sql = `SELECT ${select.join(', ')} FROM ${fragment.from.sql}`
    + (where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`)
    + (fragment.groupBy.length === 0 ? '' : ` GROUP BY ${fragment.groupBy.join(', ')}`);
  return { sql, bindings: values };
}

/** The pushed joins and aggregations of a statement: their scans, the relation scans they replace, their engine names. */
interface Fragments {
  readonly scans: SourceScan[];
  readonly absorbed: Set<number>;
  /** The name each fragment goes by in the rewritten statement (a relation of no schema) → its index in `scans`. */
  readonly tables: Map<string, number>;
}

interface FragmentContext {
  readonly scans: readonly SourceScan[];
  readonly bindings: BoundValues;
  readonly references: RangeNames;
  /** How many times each range name (an alias, a relation's or a CTE's name) is declared in the statement. */
  readonly declared: Map<string, number>;
  readonly ctes: ReadonlySet<string>;
  readonly result: Fragments;
}

/** A relation of a FROM clause that a fragment may take: named once, its alias declared once. */
interface Leaf {
  readonly node: PgObject;
  readonly alias: string;
  readonly scan: number;
}

/** `x LEFT JOIN y ON …` over two relations of one source. */
interface LeftUnit {
  readonly join: PgObject;
  readonly left: Leaf;
  readonly right: Leaf;
}

/** What a conjunct pushed into a fragment needs: the scans it reads and its text in the source's dialect. */
interface Conjunct {
  readonly node: unknown;
  readonly scans: readonly number[];
  readonly join: boolean;
  readonly predicate: PushedPredicate;
}

const AGGREGATES = new Set(['count', 'sum', 'min', 'max', 'avg', 'bool_and', 'bool_or']);
/** Types a partial aggregation may group by on a source: equality there is PostgreSQL's (text compared byte-wise). */
const GROUP_TYPES = new Set<EngineType>(['integer', 'bigint', 'decimal', 'string', 'date']);
const EXTREME_TYPES = new Set<EngineType>(['integer', 'bigint', 'decimal', 'date']);

/**
 * Rewrites `statement` (a copy) so that, at each query level (the statement, its CTEs, its subqueries in
 * FROM, the branches of a set operation), the relations of one source joined among themselves become one
 * pushed statement, and where every aggregate of the level reads one such group (or one relation), its
 * partial aggregation grouped by the columns the rest of the level reads. Each rewrite is checked first and
 * left undone where a column reference, the join tree or an aggregate does not allow it.
 */
function pushFragments(statement: PgObject, scans: readonly SourceScan[], bindings: BoundValues): Fragments {
  const result: Fragments = { scans: [], absorbed: new Set(), tables: new Map() };
  const declared = new Map<string, number>();
  const ctes = new Set<string>();
  walk(statement, (key, value) => {
    const name = key === 'RangeVar' ? String((value.alias as PgObject | undefined)?.aliasname ?? value.relname)
      : key === 'RangeSubselect' || key === 'JoinExpr' ? (value.alias as PgObject | undefined)?.aliasname
        : key === 'CommonTableExpr' ? value.ctename : undefined;
    if (key === 'CommonTableExpr') ctes.add(String(value.ctename));
    if (name !== undefined) declared.set(String(name).toLowerCase(), (declared.get(String(name).toLowerCase()) ?? 0) + 1);
  });
  fragmentLevels(statement, { scans, bindings, references: countRangeVars(statement), declared, ctes, result });
  return result;
}

/** Calls `visit` with each node of the tree, by its type. */
function walk(node: unknown, visit: (key: string, value: PgObject) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node as PgObject)) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) visit(key, value as PgObject);
      walk(value, visit);
    }
  }
}

function fragmentLevels(select: PgObject, context: FragmentContext): void {
  for (const item of list((select.withClause as PgObject | undefined)?.ctes)) {
    const [type, query] = unwrap(unwrap(item)[1].ctequery);
    if (type === 'SelectStmt') fragmentLevels(query, context);
  }
  if (select.op !== undefined && select.op !== 'SETOP_NONE') {
    fragmentLevels(select.larg as PgObject, context);
    fragmentLevels(select.rarg as PgObject, context);
    return;
  }
  const subqueries = (item: unknown): void => {
    const [type, node] = unwrap(item);
    if (type === 'JoinExpr') {
      subqueries(node.larg);
      subqueries(node.rarg);
    } else if (type === 'RangeSubselect' && node.lateral !== true) {
      const [subType, sub] = unwrap(node.subquery);
      if (subType === 'SelectStmt') fragmentLevels(sub, context);
    }
  };
  for (const item of list(select.fromClause)) subqueries(item);
  fragmentLevel(select, context);
}

/** The leaf a RangeVar is, when a fragment may take it. */
function leafOf(node: PgObject, context: FragmentContext): Leaf | undefined {
  const name = String(node.relname);
  const schema = node.schemaname === undefined ? undefined : String(node.schemaname);
  if (!namedOnce(context.references, schema, name) || (schema === undefined && context.ctes.has(name))) return undefined;
  if (node.alias !== undefined && list((node.alias as PgObject).colnames).length > 0) return undefined;
  const alias = node.alias === undefined ? name : String((node.alias as PgObject).aliasname);
  if (context.declared.get(alias.toLowerCase()) !== 1) return undefined;
  const found = findScan(context.scans.map((scan, index) => ({ relation: scan.relation, index })), schema, name);
  if (found === undefined || context.result.absorbed.has(found.index)) return undefined;
  if ((context.scans[found.index] as SourceScan).datasource.dialect.pushdown === undefined) return undefined;
  return { node, alias, scan: found.index };
}

function fragmentLevel(select: PgObject, context: FragmentContext): void {
  const { scans } = context;
  const leaves: Leaf[] = [];
  const lefts: LeftUnit[] = [];
  const quals: unknown[] = [];
  const collect = (item: unknown, inner: boolean): void => {
    const [type, node] = unwrap(item);
    if (type === 'RangeVar') {
      const leaf = inner ? leafOf(node, context) : undefined;
      if (leaf !== undefined) leaves.push(leaf);
      return;
    }
    if (type !== 'JoinExpr' || node.isNatural === true || list(node.usingClause).length > 0 || node.alias !== undefined) return;
    if (node.jointype === 'JOIN_LEFT' && inner && unwrap(node.larg)[0] === 'RangeVar' && unwrap(node.rarg)[0] === 'RangeVar') {
      const left = leafOf(unwrap(node.larg)[1], context);
      const right = leafOf(unwrap(node.rarg)[1], context);
      if (left !== undefined && right !== undefined && sameSource(scans, left.scan, right.scan) && node.quals !== undefined) {
        lefts.push({ join: node, left, right });
        return;
      }
    }
    const kind = String(node.jointype);
    collect(node.larg, inner && (kind === 'JOIN_INNER' || kind === 'JOIN_LEFT'));
    collect(node.rarg, inner && (kind === 'JOIN_INNER' || kind === 'JOIN_RIGHT'));
    if (inner && kind === 'JOIN_INNER' && node.quals !== undefined) quals.push(node.quals);
  };
  for (const item of list(select.fromClause)) collect(item, true);
  if (leaves.length === 0 && lefts.length === 0) return;

  const ranges: InnerRange[] = [...leaves, ...lefts.flatMap((unit) => [unit.left, unit.right])].map((leaf) => ({ alias: leaf.alias, scan: leaf.scan }));
  const classify = (node: unknown): Conjunct | undefined => {
    const join = sameSourceJoin(node, ranges, scans);
    if (join !== undefined) return { node, scans: [join.left.scan, join.right.scan], join: true, predicate: { sql: join.sql, bindings: [] } };
    const simple = pushablePredicate(node, ranges, scans, context.bindings, true);
    return simple === undefined ? undefined : { node, scans: [simple.scan], join: false, predicate: simple.predicate };
  };
  const conjuncts = [...splitAnd(select.whereClause), ...quals.flatMap(splitAnd)].flatMap((node) => {
    const conjunct = classify(node);
    return conjunct === undefined ? [] : [conjunct];
  });

  // inner relations of one source joined by equalities the source evaluates: one group each
  const group = leaves.map((_, index) => index);
  const root = (index: number): number => (group[index] === index ? index : root(group[index] as number));
  for (const conjunct of conjuncts.filter((candidate) => candidate.join)) {
    const [a, b] = conjunct.scans.map((scan) => leaves.findIndex((leaf) => leaf.scan === scan));
    if (a !== undefined && b !== undefined && a >= 0 && b >= 0) group[root(a)] = root(b);
  }
  const groups = new Map<number, Leaf[]>();
  leaves.forEach((leaf, index) => groups.set(root(index), [...(groups.get(root(index)) ?? []), leaf]));
  const aggregation = aggregationOf(select);
  for (const members of groups.values()) {
    const aggregated = aggregation !== undefined && tryFragment(select, context, { members, conjuncts, aggregation });
    if (!aggregated && members.length > 1) tryFragment(select, context, { members, conjuncts });
  }
  for (const unit of lefts) {
    const members = [unit.left, unit.right];
    const on = splitAnd(unit.join.quals).map(classify);
    if (on.some((conjunct) => conjunct === undefined)) continue;
    const where = conjuncts.filter((conjunct) => splitAnd(select.whereClause).includes(conjunct.node));
    const left = { join: unit.join, on: on as Conjunct[] };
    const aggregated = aggregation !== undefined && tryFragment(select, context, { members, conjuncts: where, left, aggregation });
    if (!aggregated) tryFragment(select, context, { members, conjuncts: where, left });
  }
}

function sameSource(scans: readonly SourceScan[], a: number, b: number): boolean {
  return (scans[a] as SourceScan).relation.datasource === (scans[b] as SourceScan).relation.datasource;
}

/** `a.x = b.y` between two relations of one source, of key types, as the source compares them. */
function sameSourceJoin(node: unknown, ranges: readonly InnerRange[], scans: readonly SourceScan[]): { left: RangeColumn; right: RangeColumn; sql: string } | undefined {
  const [type, value] = unwrap(node);
  if (type !== 'A_Expr' || value.kind !== 'AEXPR_OP') return undefined;
  if (list(value.name).map((item) => String(unwrap(item)[1].sval)).at(-1) !== '=') return undefined;
  const left = rangeColumn(value.lexpr, ranges, scans);
  const right = rangeColumn(value.rexpr, ranges, scans);
  if (left === undefined || right === undefined || left.scan === right.scan || !sameSource(scans, left.scan, right.scan)) return undefined;
  if (!KEY_TYPES.has(left.type) || !KEY_TYPES.has(right.type) || left.type === 'uuid' || right.type === 'uuid') return undefined;
  const integral = (candidate: EngineType) => candidate === 'integer' || candidate === 'bigint';
  if (left.type !== right.type && !(integral(left.type) && integral(right.type))) return undefined;
  const text = (found: RangeColumn) => keyColumn(scans[found.scan] as SourceScan, found.column, found.alias);
  return { left, right, sql: `${text(left)} = ${text(right)}` };
}

/** The aggregate calls of a level (targets, HAVING, ORDER BY; not in subqueries), when the level aggregates and has no window. */
interface Aggregation {
  readonly calls: readonly PgObject[];
}

function aggregationOf(select: PgObject): Aggregation | undefined {
  const calls: PgObject[] = [];
  let windowed = false;
  const find = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) find(item);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node as PgObject)) {
        if (key === 'SubLink') continue;
        if (key === 'FuncCall') {
          const call = value as PgObject;
          if (call.over !== undefined) windowed = true;
          const name = list(call.funcname).map((item) => String(unwrap(item)[1].sval)).at(-1)?.toLowerCase() ?? '';
          if (AGGREGATES.has(name) || call.agg_star === true || call.agg_distinct === true) {
            calls.push(node as PgObject);
            continue;
          }
        }
        find(value);
      }
    }
  };
  find([select.targetList, select.havingClause, select.sortClause]);
  const grouped = list(select.groupClause).length > 0;
  if (windowed || (!grouped && calls.length === 0) || select.groupDistinct === true) return undefined;
  if (list(select.groupClause).some((item) => unwrap(item)[0] === 'GroupingSet')) return undefined;
  return { calls };
}

interface FragmentRequest {
  readonly members: readonly Leaf[];
  /** The level's pushable conjuncts: those reading only the members are pushed. */
  readonly conjuncts: readonly Conjunct[];
  /** A left join of two members, replaced whole. */
  readonly left?: { readonly join: PgObject; readonly on: readonly Conjunct[] };
  readonly aggregation?: Aggregation;
}

/** A member column the rewritten statement reads from the fragment. */
interface MemberColumn {
  readonly member: Leaf;
  readonly column: CatalogColumn;
  readonly type: EngineType;
}

/** Where the level's names resolve: the columns of each range, undefined where the plan cannot tell them. */
interface LevelNames {
  readonly ranges: readonly { alias: string; columns: ReadonlySet<string> | undefined }[];
}

function namesOf(select: PgObject, context: FragmentContext): LevelNames {
  const ranges: { alias: string; columns: ReadonlySet<string> | undefined }[] = [];
  const visit = (item: unknown): void => {
    const [type, node] = unwrap(item);
    if (type === 'JoinExpr') {
      visit(node.larg);
      visit(node.rarg);
    } else if (type === 'RangeVar') {
      const name = String(node.relname);
      const schema = node.schemaname === undefined ? undefined : String(node.schemaname);
      const alias = node.alias === undefined ? name : String((node.alias as PgObject).aliasname);
      if (schema === undefined && context.result.tables.has(name)) {
        ranges.push({ alias, columns: new Set() });
        return;
      }
      const found = schema === undefined && context.ctes.has(name) ? undefined : findScan(context.scans, schema, name);
      const renamed = node.alias !== undefined && list((node.alias as PgObject).colnames).length > 0;
      ranges.push({ alias, columns: found === undefined || renamed ? undefined : new Set(found.relation.columns.map((column) => column.name)) });
    } else {
      ranges.push({ alias: '', columns: undefined });
    }
  };
  for (const item of list(select.fromClause)) visit(item);
  return { ranges };
}

/** Makes the fragment of `request` at this level and rewrites the level to read it; false where it may not. */
function tryFragment(select: PgObject, context: FragmentContext, request: FragmentRequest): boolean {
  const { scans } = context;
  const members = request.members;
  const byAlias = new Map(members.map((member) => [member.alias, member]));
  const memberScans = new Set(members.map((member) => member.scan));
  const first = scans[(members[0] as Leaf).scan] as SourceScan;
  const { dialect } = first.datasource;
  const pushed = request.conjuncts.filter((conjunct) => conjunct.scans.every((scan) => memberScans.has(scan)));
  const pushedNodes = new Set<unknown>([...pushed.map((conjunct) => conjunct.node), ...(request.left?.on.map((conjunct) => conjunct.node) ?? [])]);
  const aggregateNodes = new Set<unknown>(request.aggregation?.calls ?? []);

  // every column reference of the level, resolved: a member's column, or none of theirs; undefined: the rewrite may not be made
  const level = namesOf(select, context);
  const outputs = new Set(list(select.targetList).map((item) => {
    const target = unwrap(item)[1];
    return target.name === undefined ? outputName(target.val) : String(target.name);
  }));
  const sortNames = new Set<unknown>(list(select.sortClause).flatMap((item) => {
    const [type, ref] = unwrap(unwrap(item)[1].node);
    const fields = list(ref.fields);
    return type === 'ColumnRef' && fields.length === 1 && outputs.has(String(unwrap(fields[0])[1].sval)) ? [ref] : [];
  }));
  const memberColumn = (member: Leaf, name: string): MemberColumn | undefined => {
    const scan = scans[member.scan] as SourceScan;
    const position = scan.columns.findIndex((column) => column.name === name);
    return position < 0 ? undefined : { member, column: scan.columns[position] as CatalogColumn, type: scan.engineTypes[position] as EngineType };
  };
  const ownerOf = (name: string) => members.filter((member) => (scans[member.scan] as SourceScan).relation.columns.some((column) => column.name === name));
  let refused = false;
  const resolve = (ref: PgObject, shadowed: ReadonlySet<string> | undefined): MemberColumn | undefined => {
    const fields = list(ref.fields).map((field) => unwrap(field));
    const names = fields.map(([type, value]) => (type === 'String' ? String(value.sval) : undefined));
    if (names.some((name) => name === undefined)) {
      // `*` of the level, or of a member anywhere, reads columns the fragment renames
      if ((names.length === 1 && shadowed === undefined) || (names.length === 2 && byAlias.has(String(names[0])))) refused = true;
      return undefined;
    }
    if (names.length > 2) {
      refused = true;
      return undefined;
    }
    if (names.length === 2) {
      const member = byAlias.get(names[0] as string);
      if (member === undefined) return undefined;
      const found = memberColumn(member, names[1] as string);
      if (found === undefined) refused = true;
      return found;
    }
    const name = names[0] as string;
    const owners = ownerOf(name);
    if (owners.length === 0 || sortNames.has(ref)) return undefined;
    if (shadowed !== undefined) {
      // in a subquery: its own relation's column, or an outer one the rewrite would have to follow
      if (!shadowed.has(name)) refused = true;
      return undefined;
    }
    const known = level.ranges.filter((range) => range.columns === undefined || range.columns.has(name));
    if (known.length !== 1 || owners.length !== 1 || known[0]?.alias !== owners[0]?.alias) {
      refused = true;
      return undefined;
    }
    const found = memberColumn(owners[0] as Leaf, name);
    if (found === undefined) refused = true;
    return found;
  };
  const references: { ref: PgObject; column: MemberColumn }[] = [];
  const visitRefs = (node: unknown, shadowed: ReadonlySet<string> | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) visitRefs(item, shadowed);
      return;
    }
    if (node === null || typeof node !== 'object' || pushedNodes.has(node) || aggregateNodes.has(node)) return;
    for (const [key, value] of Object.entries(node as PgObject)) {
      if (key === 'ColumnRef') {
        const column = resolve(value as PgObject, shadowed);
        if (column !== undefined) references.push({ ref: value as PgObject, column });
      } else if (key === 'SelectStmt') {
        const own = namesOf(value as PgObject, context).ranges;
        // a subquery over a range whose columns the plan cannot tell might shadow any name
        const names = own.some((range) => range.columns === undefined) ? new Set<string>() : new Set(own.flatMap((range) => [...(range.columns ?? [])]));
        visitRefs(value, new Set([...(shadowed ?? []), ...names]));
      } else {
        visitRefs(value, shadowed);
      }
    }
  };
  const joinQuals = (item: unknown): unknown[] => {
    const [type, node] = unwrap(item);
    return type === 'JoinExpr' ? [node.quals, ...joinQuals(node.larg), ...joinQuals(node.rarg)] : [];
  };
  const { fromClause: from, withClause: _with, ...rest } = select;
  visitRefs([rest, list(from).flatMap(joinQuals)], undefined);
  // aggregated: each aggregate reads the members only, in a form the source computes exactly
  const aggregates: { call: PgObject; pushed: string; column: CatalogColumn; type: EngineType; replacement: PgObject }[] = [];
  if (request.aggregation !== undefined) {
    let reads = false;
    for (const call of request.aggregation.calls) {
      const made = partialAggregate(call, aggregates.length + 1, (ref) => {
        const column = resolve(ref, undefined);
        if (column !== undefined) reads = true;
        return column;
      }, dialect);
      if (made === undefined) return false;
      aggregates.push({ call, ...made });
    }
    if (!reads || references.some((reference) => !GROUP_TYPES.has(reference.column.type))) return false;
  }
  if (refused) return false;

  // the level's FROM with the fragment in the place of its first member (a left join's, or the preserved side's)
  let name = '';
  for (let n = context.result.scans.length + 1; name === '' || context.declared.has(name) || context.declared.has(`vdb_f${n - 1}`); n += 1) name = `vdb_fragment_${n}`;
  const alias = name.replace('vdb_fragment_', 'vdb_f');
  const range = { RangeVar: { relname: name, inh: true, relpersistence: 'p', alias: { aliasname: alias } } };
  const memberNodes = new Set(members.map((member) => member.node));
  const anchor = request.left?.join ?? members.find((member) => preservedSide(select.fromClause, member.node))?.node ?? (members[0] as Leaf).node;
  const moved: unknown[] = [];
  let placed = false;
  let broken = false;
  const strip = (item: unknown): unknown => {
    const [type, node] = unwrap(item);
    if (node === anchor) {
      placed = true;
      return range;
    }
    if (type === 'RangeVar') return memberNodes.has(node) ? undefined : item;
    if (type !== 'JoinExpr') return item;
    const left = strip(node.larg);
    const right = strip(node.rarg);
    if (left !== undefined && right !== undefined) {
      const kept = splitAnd(node.quals).filter((conjunct) => !pushedNodes.has(conjunct));
      return { JoinExpr: { ...node, larg: left, rarg: right, quals: conjoined(kept) } };
    }
    if (node.jointype !== 'JOIN_INNER') broken = true;
    moved.push(...splitAnd(node.quals));
    return left ?? right;
  };
  const fromClause = list(from).map(strip).filter((item) => item !== undefined);
  if (!placed || broken) return false;

  // the fragment's statement
  const index = context.result.scans.length;
  const quote = (text: string) => dialect.quoteIdentifier(text);
  const relationOf = (member: Leaf) => {
    const { relation } = scans[member.scan] as SourceScan;
    return `${quote(relation.schema)}.${quote(relation.name)} ${quote(member.alias)}`;
  };
  const fromSql: PushedPredicate = request.left === undefined
    ? { sql: members.map(relationOf).join(', '), bindings: [] }
    : {
      sql: `${relationOf(members[0] as Leaf)} LEFT JOIN ${relationOf(members[1] as Leaf)} ON ${request.left.on.map((conjunct) => conjunct.predicate.sql).join(' AND ')}`,
      bindings: request.left.on.flatMap((conjunct) => conjunct.predicate.bindings),
    };
  const used = new Map<string, MemberColumn>();
  for (const { column } of references) used.set(`${column.member.alias}.${column.column.name}`, column);
  const columns: CatalogColumn[] = [];
  const engineTypes: EngineType[] = [];
  const selectList: string[] = [];
  const groupBy: string[] = [];
  const keys = new Map<string, { plain: string; compared: string }>();
  for (const [engineName, { member, column, type }] of used) {
    const source = qualified(dialect, column.name, member.alias);
    const compared = keyColumn(scans[member.scan] as SourceScan, column, member.alias);
    columns.push({ ...column, name: engineName });
    engineTypes.push(type);
    keys.set(engineName, { plain: source, compared });
    if (request.aggregation === undefined) {
      selectList.push(`${source} AS ${quote(engineName)}`);
    } else {
      // grouped by the bytes of a text: any of its values is the group's, they are all the same
      selectList.push(`${type === 'string' ? `MIN(${source})` : source} AS ${quote(engineName)}`);
      groupBy.push(type === 'string' ? compared : source);
    }
  }
  for (const aggregate of aggregates) {
    columns.push(aggregate.column);
    engineTypes.push(aggregate.type);
    selectList.push(`${aggregate.pushed} AS ${quote(aggregate.column.name)}`);
  }
  const joins = pushed.filter((conjunct) => conjunct.join).map((conjunct) => conjunct.predicate);
  const predicates = pushed.filter((conjunct) => !conjunct.join).map((conjunct) => conjunct.predicate);
  context.result.scans.push({
    relation: first.relation, datasource: first.datasource, table: `f${index + 1}`, columns, engineTypes, predicates,
    fragment: { from: fromSql, joins, select: selectList, groupBy, keys },
    // its groups, usually far fewer than the rows it reads: one statement, which PostgreSQL may run in parallel (a cursor never is)
    ...(aggregates.length > 0 && { small: true as const }),
  });
  context.result.tables.set(name, index);
  for (const member of members) context.result.absorbed.add(member.scan);
  context.declared.set(name, 1);
  context.declared.set(alias, 1);

  // the level, rewritten to read it: output names kept, member columns renamed, aggregates over the partial ones
  for (const item of list(select.targetList)) {
    const target = unwrap(item)[1];
    if (target.name === undefined) target.name = outputName(target.val);
  }
  for (const { ref, column } of references) ref.fields = columnRef(alias, `${column.member.alias}.${column.column.name}`).ColumnRef.fields;
  for (const aggregate of aggregates) {
    for (const key of Object.keys(aggregate.call)) delete aggregate.call[key];
    const replacement = structuredClone(aggregate.replacement);
    walk(replacement, (key, value) => {
      if (key === 'ColumnRef' && list(value.fields).length === 1) value.fields = [{ String: { sval: alias } }, ...list(value.fields)];
    });
    Object.assign(aggregate.call, replacement);
  }
  select.fromClause = fromClause;
  const where = [...splitAnd(select.whereClause), ...moved].filter((conjunct) => !pushedNodes.has(conjunct));
  select.whereClause = conjoined(where);
  return true;
}

/** Numbers the parameters left in `statement` 1, 2, … in their order of first use; the request's values' positions in that order. */
function renumberParameters(statement: PgObject): readonly number[] {
  const numbers = new Map<number, number>();
  walk(statement, (key, value) => {
    if (key !== 'ParamRef') return;
    const number = Number(value.number);
    if (!numbers.has(number)) numbers.set(number, numbers.size + 1);
    value.number = numbers.get(number);
  });
  return [...numbers.keys()].map((number) => number - 1);
}

/** Whether `node` is the preserved side of a left (or right) join of the FROM clause: the fragment must stand there. */
function preservedSide(from: unknown, node: PgObject): boolean {
  let found = false;
  walk(from, (key, value) => {
    if (key !== 'JoinExpr') return;
    if ((value.jointype === 'JOIN_LEFT' && unwrap(value.larg)[1] === node) || (value.jointype === 'JOIN_RIGHT' && unwrap(value.rarg)[1] === node)) found = true;
  });
  return found;
}

function conjoined(conjuncts: readonly unknown[]): unknown {
  if (conjuncts.length === 0) return undefined;
  if (conjuncts.length === 1) return conjuncts[0];
  return { BoolExpr: { boolop: 'AND_EXPR', args: [...conjuncts] } };
}

function columnRef(...names: string[]): { ColumnRef: { fields: unknown[] } } {
  return { ColumnRef: { fields: names.map((name) => ({ String: { sval: name } })) } };
}

function funcCall(name: string, args: unknown[]): PgObject {
  return { FuncCall: { funcname: [{ String: { sval: name } }], args, funcformat: 'COERCE_EXPLICIT_CALL' } };
}

function asBigint(arg: unknown): PgObject {
  return { TypeCast: { arg, typeName: { names: [{ String: { sval: 'pg_catalog' } }, { String: { sval: 'int8' } }], typemod: -1 } } };
}

/**
 * The partial aggregate a source computes for `call` (`sum`, `count`, `min`, `max`, without DISTINCT but
 * in min and max, FILTER or ORDER BY), named `vdb_agg_n`, and the engine's aggregate over it (its column
 * unqualified, qualified by the caller): the sum of the sums and of the counts, the min of the mins.
 */
function partialAggregate(
  call: PgObject, n: number, resolve: (ref: PgObject) => MemberColumn | undefined, dialect: Datasource['dialect'],
): { pushed: string; column: CatalogColumn; type: EngineType; replacement: PgObject } | undefined {
  const node = call.FuncCall as PgObject | undefined;
  if (node === undefined || node.over !== undefined || node.agg_filter !== undefined || list(node.agg_order).length > 0 || node.agg_within_group === true) return undefined;
  const names = list(node.funcname).map((item) => String(unwrap(item)[1].sval));
  if (names.length > 1 && names[0] !== 'pg_catalog') return undefined;
  const name = (names.at(-1) ?? '').toLowerCase();
  const args = list(node.args);
  const columnName = `vdb_agg_${n}`;
  const partial = columnRef(columnName);
  const column = (logicalType: CatalogColumn['logicalType'], nativeType: string): CatalogColumn => ({ name: columnName, logicalType, nativeType, nullable: true });
  const plain = (arg: unknown): MemberColumn | undefined => {
    const [type, value] = unwrap(arg);
    return type === 'ColumnRef' ? resolve(value) : undefined;
  };
  if (name === 'count' && node.agg_distinct !== true) {
    let pushed = 'COUNT(*)';
    if (node.agg_star !== true) {
      const found = args.length === 1 ? plain(args[0]) : undefined;
      if (found === undefined) return undefined;
      pushed = `COUNT(${qualified(dialect, found.column.name, found.member.alias)})`;
    }
    // no row at all: the count is 0, not the NULL a sum of no counts is
    const replacement = asBigint({ CoalesceExpr: { args: [funcCall('sum', [partial]), { A_Const: { ival: {} } }] } });
    return { pushed, column: column('bigint', 'bigint'), type: 'bigint', replacement };
  }
  if ((name === 'min' || name === 'max') && args.length === 1) {
    const found = plain(args[0]);
    if (found === undefined || !EXTREME_TYPES.has(found.type)) return undefined;
    const pushed = `${name.toUpperCase()}(${qualified(dialect, found.column.name, found.member.alias)})`;
    return { pushed, column: { ...found.column, name: columnName, nullable: true }, type: found.type, replacement: funcCall(name, [partial]) };
  }
  if (name === 'sum' && node.agg_distinct !== true && args.length === 1) {
    const value = exactValue(args[0], resolve, dialect);
    if (value === undefined) return undefined;
    const pushed = `SUM(${value.sql})`;
    // PostgreSQL: sum(int) is bigint, sum(bigint) and sum(numeric) numeric of the argument's scale
    if (value.type === 'integer') return { pushed, column: column('bigint', 'bigint'), type: 'bigint', replacement: asBigint(funcCall('sum', [partial])) };
    return { pushed, column: column('decimal', `numeric(38,${value.scale})`), type: 'decimal', replacement: funcCall('sum', [partial]) };
  }
  return undefined;
}

/**
 * A value both a source and PostgreSQL compute exactly alike: an integer or fixed-scale numeric column of a
 * member, or `+ - *` of such values with a numeric among them (integers alone could overflow differently).
 */
function exactValue(
  node: unknown, resolve: (ref: PgObject) => MemberColumn | undefined, dialect: Datasource['dialect'],
): { sql: string; type: EngineType; scale: number } | undefined {
  const [type, value] = unwrap(node);
  if (type === 'ColumnRef') {
    const found = resolve(value);
    if (found === undefined) return undefined;
    const sql = qualified(dialect, found.column.name, found.member.alias);
    if (found.type === 'integer' || found.type === 'bigint') return { sql, type: found.type, scale: 0 };
    if (found.type !== 'decimal') return undefined;
    const scale = Number(/\(\s*\d+\s*,\s*(\d+)\s*\)/.exec(found.column.nativeType)?.[1] ?? 0);
    return { sql, type: 'decimal', scale };
  }
  if (type !== 'A_Expr' || value.kind !== 'AEXPR_OP' || value.lexpr === undefined) return undefined;
  const op = list(value.name).map((item) => String(unwrap(item)[1].sval)).at(-1) ?? '';
  if (!['+', '-', '*'].includes(op)) return undefined;
  const left = exactValue(value.lexpr, resolve, dialect);
  const right = exactValue(value.rexpr, resolve, dialect);
  if (left === undefined || right === undefined || (left.type !== 'decimal' && right.type !== 'decimal')) return undefined;
  const scale = op === '*' ? left.scale + right.scale : Math.max(left.scale, right.scale);
  return { sql: `(${left.sql} ${op} ${right.sql})`, type: 'decimal', scale };
}
