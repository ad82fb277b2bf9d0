/**
 * The plan of a statement over several datasources of a VDB (docs/federation.md#the-plan): parsed as
 * PostgreSQL, each relation read from its source by a pushed statement in the source's dialect (the columns
 * used, the predicates on that relation alone that the source evaluates as PostgreSQL would, and, when the
 * other side of an equi-join is selective, that side's keys), the rest written for the engine.
 */
import { loadModule, parseSync } from 'libpg-query';
import type { CatalogColumn } from '../plugin-api/catalog.js';
import { InputError, messageOf } from '../plugin-api/errors.js';
import type { Datasource } from '../plugin-api/sql-dialect.js';
import type { VdbRelation } from '../plugin-api/vdb.js';
import { withServerPlaceholders } from '../sql-grammar/server-placeholders.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { engineSql, unsupported, type EngineTable, type EngineType } from './engine-sql.js';

type PgObject = { [field: string]: unknown };

/** A relation the authorizer found, with the columns the statement reads of it. */
export interface ReadRelation {
  readonly schema: string;
  readonly name: string;
  readonly columns: readonly string[];
}

/** A predicate pushed to a source: its text in the source's dialect (`?` per value) and its values. */
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
}

/** What runs where: a statement per relation on its source, and the engine's statement over their rows. */
export interface FederatedPlan {
  readonly scans: readonly SourceScan[];
  readonly engineSql: string;
  /** The statement's bound values, in the engine's `$n` order. */
  readonly bindings: readonly unknown[];
  /** The result columns that are a numeric division (an `avg`, a `/`): the engine answers `{a, b}`, divided as PostgreSQL divides. */
  readonly quotients: readonly number[];
  /** The statement was `EXPLAIN <query>`: its answer is the plan (`explainFederated`), nothing runs. */
  readonly explain: boolean;
}

/** The name of the engine column that stands for a row when a relation's columns are not read. */
export const ROW_MARK_COLUMN = 'vdb_row';

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

  const scans = distinct(relations).map((read, index) => scanOf(handle, read, index));
  const tables = (schema: string | undefined, name: string): EngineTable | undefined => {
    const scan = findScan(scans, schema, name);
    if (scan === undefined) return undefined;
    const columns = scan.columns.length === 0
      ? new Map<string, EngineType>([[ROW_MARK_COLUMN, 'integer']])
      : new Map(scan.columns.map((column, position) => [column.name, scan.engineTypes[position] as EngineType]));
    return { table: scan.table, columns };
  };
  const engine = engineSql(select, { table: tables });
  const pushed = pushdown(select, scans, bindings);
  const quotients = engine.outputs.flatMap((output, index) => (output.quotient ? [index] : []));
  return { scans: pushed, engineSql: engine.sql, bindings, quotients, explain };
}

/** The pushed statement of a scan, as it runs: the predicates and, for a dependent scan, its keys. */
export function sourceStatement(scan: SourceScan, keys?: readonly unknown[]): { sql: string; bindings: unknown[] } {
  const { dialect } = scan.datasource;
  const quote = (name: string) => dialect.quoteIdentifier(name);
  const columns = scan.columns.length === 0 ? `1 AS ${quote(ROW_MARK_COLUMN)}` : scan.columns.map((column) => quote(column.name)).join(', ');
  const conditions = scan.predicates.map((predicate) => predicate.sql);
  const values = scan.predicates.flatMap((predicate) => predicate.bindings);
  if (keys !== undefined && scan.dependent !== undefined && dialect.pushdown !== undefined) {
    const target = keyColumn(scan, scan.dependent.column);
    const match = dialect.pushdown.anyOf(target, keys);
    conditions.push(match.sql);
    values.push(...match.bindings);
  }
  const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  return { sql: `SELECT ${columns} FROM ${quote(scan.relation.schema)}.${quote(scan.relation.name)}${where}`, bindings: values };
}

/** The engine's type for a column as the source describes it; columns the engine cannot hold exactly are refused. */
export function engineTypeOf(column: CatalogColumn, relation: VdbRelation): { type: EngineType; sql: string } {
  const subject = `column ${relation.schema}.${relation.name}.${column.name}`;
  switch (column.logicalType) {
    case 'string': return { type: 'string', sql: 'VARCHAR' };
    case 'integer': return /unsigned/i.test(column.nativeType) ? { type: 'bigint', sql: 'BIGINT' } : { type: 'integer', sql: 'INTEGER' };
    case 'bigint': return /unsigned/i.test(column.nativeType) ? { type: 'decimal', sql: 'DECIMAL(20,0)' } : { type: 'bigint', sql: 'BIGINT' };
    case 'decimal': {
      const match = /\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)/.exec(column.nativeType);
      const precision = Number(match?.[1] ?? 0);
      if (match === null) return { type: 'numeric', sql: `DECIMAL(38,${UNCONSTRAINED_SCALE})` };
      if (precision > 38) throw unsupported(`${subject} of type ${column.nativeType} (more than 38 digits)`);
      return { type: 'decimal', sql: `DECIMAL(${precision},${Number(match[2] ?? 0)})` };
    }
    case 'float': return { type: 'float', sql: 'DOUBLE' };
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
export function explainFederated(plan: FederatedPlan): { sources: { datasource: string; sql: string; dependentOn?: string }[]; engine: { sql: string } } {
  return {
    sources: plan.scans.map((scan) => {
      const { sql } = sourceStatement(scan, scan.dependent === undefined ? undefined : [null]);
      const driver = scan.dependent === undefined ? undefined : plan.scans[scan.dependent.driver];
      return { datasource: scan.relation.datasource, sql, ...(driver && { dependentOn: driver.relation.datasource }) };
    }),
    engine: { sql: plan.engineSql },
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
function pushdown(select: PgObject, scans: readonly SourceScan[], bindings: readonly unknown[]): SourceScan[] {
  const result = [...scans];
  if (select.op !== undefined && select.op !== 'SETOP_NONE') return result;
  const references = countRangeVars(select);
  const ranges: InnerRange[] = [];
  const joinQuals: unknown[] = [];
  for (const item of list(select.fromClause)) collectInner(item, scans, references, ranges, joinQuals);
  const conjuncts = [...splitAnd(select.whereClause), ...joinQuals.flatMap(splitAnd)];
  const pushedPredicates = new Map<number, PushedPredicate[]>();
  for (const conjunct of splitAnd(select.whereClause)) {
    const pushed = pushablePredicate(conjunct, ranges, scans, bindings);
    if (pushed === undefined) continue;
    pushedPredicates.set(pushed.scan, [...(pushedPredicates.get(pushed.scan) ?? []), pushed.predicate]);
  }
  for (const [index, predicates] of pushedPredicates) result[index] = { ...(result[index] as SourceScan), predicates };
  // dependent joins: a scan with pushed predicates drives the scan of another source it is equi-joined to
  for (const conjunct of conjuncts) {
    const edge = equiJoin(conjunct, ranges, scans);
    if (edge === undefined) continue;
    for (const [driver, driven] of [[edge.left, edge.right], [edge.right, edge.left]] as const) {
      const driverScan = result[driver.scan] as SourceScan;
      const drivenScan = result[driven.scan] as SourceScan;
      if (driverScan.predicates.length === 0 || drivenScan.predicates.length > 0 || drivenScan.dependent !== undefined) continue;
      if (driverScan.dependent !== undefined || drivenScan.datasource.dialect.pushdown === undefined) continue;
      result[driven.scan] = { ...drivenScan, dependent: { driver: driver.scan, driverColumn: driver.column.name, column: driven.column } };
      break;
    }
  }
  return result;
}

/** How many times each relation is named anywhere in the statement. */
function countRangeVars(node: unknown, counts = new Map<string, number>()): Map<string, number> {
  if (Array.isArray(node)) {
    for (const item of node) countRangeVars(item, counts);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node as PgObject)) {
      if (key === 'RangeVar') {
        const range = value as PgObject;
        const name = String(range.relname);
        counts.set(name.toLowerCase(), (counts.get(name.toLowerCase()) ?? 0) + 1);
      } else {
        countRangeVars(value, counts);
      }
    }
  }
  return counts;
}

function collectInner(item: unknown, scans: readonly SourceScan[], references: ReadonlyMap<string, number>, ranges: InnerRange[], quals: unknown[]): void {
  const [type, node] = unwrap(item);
  if (type === 'RangeVar') {
    const name = String(node.relname);
    if ((references.get(name.toLowerCase()) ?? 0) !== 1) return;
    const schema = node.schemaname === undefined ? undefined : String(node.schemaname);
    const scan = findScan(scans.map((candidate, index) => ({ relation: candidate.relation, index })), schema, name);
    if (scan === undefined) return;
    if (node.alias !== undefined && list((node.alias as PgObject).colnames).length > 0) return;
    ranges.push({ alias: node.alias === undefined ? name : String((node.alias as PgObject).aliasname), scan: scan.index });
    return;
  }
  if (type !== 'JoinExpr' || node.isNatural === true) return;
  if (node.jointype === 'JOIN_INNER') {
    collectInner(node.larg, scans, references, ranges, quals);
    collectInner(node.rarg, scans, references, ranges, quals);
    if (node.quals !== undefined && list(node.usingClause).length === 0) quals.push(node.quals);
  } else if (node.jointype === 'JOIN_LEFT') {
    collectInner(node.larg, scans, references, ranges, []);
  } else if (node.jointype === 'JOIN_RIGHT') {
    collectInner(node.rarg, scans, references, ranges, []);
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
  const scanIndex = (candidates[0] as InnerRange).scan;
  const scan = scans[scanIndex] as SourceScan;
  const position = scan.columns.findIndex((column) => column.name === name);
  if (position < 0) return undefined;
  return { scan: scanIndex, column: scan.columns[position] as CatalogColumn, type: scan.engineTypes[position] as EngineType };
}

/** A constant or bound value the source can compare with a column of `type`, as its bound value. */
function pushableValue(node: unknown, type: EngineType, bindings: readonly unknown[]): { value: unknown } | undefined {
  const [kind, value] = unwrap(node);
  if (kind === 'ParamRef') {
    const bound = bindings[Number(value.number) - 1];
    if (bound === null || bound === undefined) return undefined;
    if (type === 'string' ? typeof bound === 'string' : typeof bound === 'number' || typeof bound === 'string') return { value: bound };
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

/** A column as its source compares it with PostgreSQL's semantics: text byte-wise. */
function keyColumn(scan: SourceScan, column: CatalogColumn): string {
  const { dialect } = scan.datasource;
  const quoted = dialect.quoteIdentifier(column.name);
  return column.logicalType === 'string' && dialect.pushdown !== undefined ? dialect.pushdown.byteWiseText(quoted) : quoted;
}

function pushablePredicate(
  node: unknown, ranges: readonly InnerRange[], scans: readonly SourceScan[], bindings: readonly unknown[],
): { scan: number; predicate: PushedPredicate } | undefined {
  const [type, value] = unwrap(node);
  const columnOf = (operand: unknown) => {
    const found = rangeColumn(operand, ranges, scans);
    if (found === undefined || !PUSHABLE_TYPES.has(found.type)) return undefined;
    // text is compared byte-wise on the source, which only a dialect that says how can do
    if (found.type === 'string' && (scans[found.scan] as SourceScan).datasource.dialect.pushdown === undefined) return undefined;
    return found;
  };
  const text = (found: RangeColumn) => keyColumn(scans[found.scan] as SourceScan, found.column);
  if (type === 'NullTest' && value.argisrow !== true) {
    const found = columnOf(value.arg);
    if (found === undefined) return undefined;
    const quoted = (scans[found.scan] as SourceScan).datasource.dialect.quoteIdentifier(found.column.name);
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
    return { scan: found.scan, predicate: { sql: `${text(found)} ${operator} ?`, bindings: [constant.value] } };
  }
  if (value.kind === 'AEXPR_IN' && op === '=') {
    const found = columnOf(value.lexpr);
    if (found === undefined) return undefined;
    const items = list(unwrap(value.rexpr)[1].items).map((item) => pushableValue(item, found.type, bindings));
    if (items.length === 0 || items.some((item) => item === undefined)) return undefined;
    return { scan: found.scan, predicate: { sql: `${text(found)} IN (${items.map(() => '?').join(', ')})`, bindings: items.map((item) => item?.value) } };
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

