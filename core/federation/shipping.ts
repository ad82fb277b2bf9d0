/**
 * Shipping the small side (docs/federation.md#shipping-the-small-side): where every relation of a statement
 * but those of one source that evaluates PostgreSQL's text is read by a plain pushed statement, and those
 * reads turn out few, their rows are sent to that source as bound arrays, one per column, in the place of
 * the relations, and the source answers the whole statement: PostgreSQL itself evaluates it, as the caller,
 * in one statement where the engine would have loaded every side. Teiid calls it a dependent join pushdown.
 * Planned here once per plan, as text spliced from the statement's own (nothing else of it is rewritten);
 * run by federated-run.ts, which falls back to the engine when the reads are more than it sends.
 */
import { scanSync } from 'libpg-query';
import type { CatalogColumn } from '../plugin-api/catalog.js';
import type { Datasource } from '../plugin-api/sql-dialect.js';
import type { VdbRelation } from '../plugin-api/vdb.js';
import { ROW_MARK_COLUMN, type EngineType } from './engine-sql.js';

type PgObject = { [field: string]: unknown };

/** A statement a source answers with the rows of the other sources' scans bound into it. */
export interface Shipping {
  /** The source that answers the statement. */
  readonly datasource: Datasource;
  /** The plan's scans whose rows it is sent (indexes of `FederatedPlan.scans`); read first, each in one statement. */
  readonly shipped: readonly number[];
  /** The statement for the source, `?` per bound value. */
  readonly sql: string;
  /** Its bound values in order: the request's `value`th, or a shipped scan's column as one array. */
  readonly bindings: readonly ShippedBinding[];
  /**
   * A scan of the receiving source is read, in the engine's plan, with a shipped scan's keys: shipping is
   * then only for as many rows as a dependent join binds keys (`federation.semiJoinMaxKeys`).
   */
  readonly keyed: boolean;
  /**
   * The statement maps case or matches patterns (upper, ILIKE, a regular expression): the source must then
   * classify characters as collation "C" does (ASCII only), not only order them byte-wise (`C.UTF-8`).
   */
  readonly classifies: boolean;
}

export type ShippedBinding = { readonly value: number } | { readonly scan: number; readonly column: string };

/** A scan of the plan as shipping weighs it. */
export interface ShippingScan {
  readonly relation: VdbRelation;
  readonly datasource: Datasource;
  /** The columns it reads, as engine types; empty: only its rows count. */
  readonly columns: readonly CatalogColumn[];
  readonly engineTypes: readonly EngineType[];
  /** A pushed join or aggregation: never shipped (its rows are not one relation's). */
  readonly fragment: boolean;
  /** Expected to be a few rows: a unique key's equality, an aggregation's groups. */
  readonly small: boolean;
  /** Read with the keys of scan `dependentOn`'s rows: never shipped (whole, it may be large). */
  readonly dependentOn: number | undefined;
}

/** The most columns of one relation a statement may read for its rows to be shipped: each is one bound value. */
const MAX_SHIPPED_COLUMNS = 64;

/** The column's type as the receiving PostgreSQL declares the array its values are sent in, or undefined. */
const NATIVE_TYPES = /^(smallint|integer|bigint|real|double precision|boolean|date|text|uuid|numeric(\(\d+(,\d+)?\))?|character varying(\(\d+\))?|character(\(\d+\))?|time without time zone|timestamp(\(\d\))? with(out)? time zone)$/;

function shippedType(column: CatalogColumn, type: EngineType, source: Datasource): string | undefined {
  // a PostgreSQL source's own type where it is a built-in one (char(n) compares as char(n)); else the engine's exact type
  if (source.dialect.capabilities.postgresqlText === true && NATIVE_TYPES.test(column.nativeType)) return column.nativeType;
  switch (type) {
    case 'integer': case 'bigint': case 'boolean': case 'date': case 'uuid': case 'timestamptz': case 'numeric': return type;
    case 'decimal': {
      const match = /\((\d+)\s*(?:,\s*(\d+)\s*)?\)/.exec(column.nativeType);
      return /unsigned/i.test(column.nativeType) && match === null ? 'numeric(20,0)' : match === null ? undefined : `numeric(${match[1]},${match[2] ?? 0})`;
    }
    case 'float': return 'double precision';
    case 'string': return 'text';
    case 'time': return 'time';
    case 'timestamp': return 'timestamp';
    default: return undefined;
  }
}

/**
 * The shipping of a statement (`text`, numbered `$n`, parsed as `root`), or undefined where it has none.
 * The receiving source is the one with the most to read (scans not expected to be few, a pushed join
 * counting twice), ties to the VDB's default datasource; it must evaluate PostgreSQL's text, and every
 * other scan be one relation's plain read. Each scan of the receiving source must be one the engine's plan
 * reads few rows of anyway (a unique key's equality, a shipped scan's keys, an aggregation's groups): so
 * shipping changes what the statement costs, not which bound it meets (`federation.maxSourceRows`,
 * `federation.memoryLimit`). `relationOf` resolves a relation name as the authorizer did.
 */
export function planShipping(
  text: string, root: PgObject, scans: readonly ShippingScan[], defaultDatasource: string,
  relationOf: (schema: string | undefined, name: string) => VdbRelation | undefined,
): Shipping | undefined {
  const weights = new Map<string, number>();
  for (const scan of scans) weights.set(scan.relation.datasource, (weights.get(scan.relation.datasource) ?? 0) + (scan.fragment ? 2 : scan.small ? 0 : 1));
  if (weights.size < 2) return undefined;
  const heaviest = Math.max(...weights.values());
  const candidates = [...weights].filter(([, weight]) => weight === heaviest).map(([name]) => name);
  const target = candidates.includes(defaultDatasource) ? defaultDatasource : candidates.sort()[0];
  const receiver = scans.find((scan) => scan.relation.datasource === target)?.datasource;
  if (receiver === undefined || receiver.dialect.capabilities.postgresqlText !== true) return undefined;
  const quote = (name: string) => receiver.dialect.quoteIdentifier(name);

  const elsewhere = (index: number | undefined) => index !== undefined && scans[index]?.relation.datasource !== target;
  const receiving = scans.filter((scan) => scan.relation.datasource === target);
  if (!receiving.every((scan) => scan.small || elsewhere(scan.dependentOn))) return undefined;
  const keyed = receiving.some((scan) => elsewhere(scan.dependentOn));

  const shipped = new Map<VdbRelation, { index: number; columns: { name: string; type: string }[] }>();
  for (const [index, scan] of scans.entries()) {
    if (scan.relation.datasource === target) continue;
    if (scan.fragment || scan.dependentOn !== undefined || scan.columns.length > MAX_SHIPPED_COLUMNS) return undefined;
    const columns = scan.columns.length === 0
      ? [{ name: ROW_MARK_COLUMN, type: 'integer' }]
      : scan.columns.map((column, position) => ({ name: column.name, type: shippedType(column, scan.engineTypes[position] as EngineType, scan.datasource) }));
    if (columns.some((column) => column.type === undefined)) return undefined;
    shipped.set(scan.relation, { index, columns: columns as { name: string; type: string }[] });
  }

  const found = references(root);
  if (found === undefined) return undefined;
  const shippedNames = new Set([...shipped.keys()].map((relation) => relation.name.toLowerCase()));
  if (found.cteNames.some((name) => shippedNames.has(name.toLowerCase()))) return undefined;
  // a star reads every column: only where the scan reads them all (a relation's rows are sent with the columns read)
  if (found.star && [...shipped].some(([relation, { columns }]) => columns.length !== relation.columns.length)) return undefined;

  const edits: Edit[] = [];
  for (const range of found.ranges) {
    if (range.catalog !== undefined) return undefined;
    if (range.schema === undefined && found.cteNames.includes(range.name)) continue;
    const relation = relationOf(range.schema, range.name);
    if (relation === undefined) return undefined;
    const alias = range.alias ?? range.name;
    const sent = shipped.get(relation);
    if (sent !== undefined) {
      // sent as the relation's rows, under its name in the statement: a whole-row reference or ONLY would differ
      if (!range.inherited || range.aliasColumns || found.bareNames.has(alias.toLowerCase())) return undefined;
      edits.push({ location: range.location, parts: range.schema === undefined ? 1 : 3, pieces: shippedRows(sent, range.alias === undefined ? alias : undefined, quote) });
    } else if (relation.datasource === target && range.schema === undefined) {
      // named as the VDB resolved it, whatever the source's search path would find
      edits.push({ location: range.location, parts: 1, pieces: [`${quote(relation.schema)}.${quote(relation.name)}${range.alias === undefined ? ` AS ${quote(range.name)}` : ''}`] });
    }
  }
  if (edits.length === 0) return undefined;
  const written = splice(text, edits);
  return written === undefined ? undefined : { datasource: receiver, shipped: [...shipped.values()].map((sent) => sent.index), ...written, classifies: found.classifies, keyed };
}

/** The FROM item of a shipped relation's rows: pieces of text and its columns' bound arrays, in order. */
function shippedRows(sent: { index: number; columns: readonly { name: string; type: string }[] }, alias: string | undefined, quote: (name: string) => string): Piece[] {
  const pieces: Piece[] = ['(SELECT * FROM unnest('];
  sent.columns.forEach((column, position) => pieces.push(position === 0 ? '' : ', ', { scan: sent.index, column: column.name }, `::${column.type}[]`));
  pieces.push(`) AS vdb_shipped(${sent.columns.map((column) => quote(column.name)).join(', ')}))${alias === undefined ? '' : ` AS ${quote(alias)}`}`);
  return pieces;
}

type Piece = string | { readonly scan: number; readonly column: string };

/** A relation name in the text, from its first token, replaced by `pieces`; `parts` is how many names it has (1 or 3 tokens: `s` `.` `n`). */
interface Edit {
  readonly location: number;
  readonly parts: number;
  readonly pieces: readonly Piece[];
}

interface RangeReference {
  readonly catalog: string | undefined;
  readonly schema: string | undefined;
  readonly name: string;
  readonly alias: string | undefined;
  readonly aliasColumns: boolean;
  readonly inherited: boolean;
  readonly location: number;
}

/** Functions and operators whose answer depends on how the database classifies characters (its LC_CTYPE). */
const CLASSIFYING_FUNCTIONS = /^(upper|lower|initcap|casefold|regexp_\w+|similar_to_escape|to_tsvector|to_tsquery|plainto_tsquery|phraseto_tsquery|websearch_to_tsquery)$/;
const CLASSIFYING_OPERATORS = new Set(['~', '~*', '!~', '!~*', '~~*', '!~~*']);

/**
 * The relation names of a statement, its CTE names, whether it reads a `*`, its one-name column references,
 * and whether it classifies characters.
 */
function references(root: unknown): { ranges: RangeReference[]; cteNames: string[]; star: boolean; bareNames: Set<string>; classifies: boolean } | undefined {
  const ranges: RangeReference[] = [];
  const cteNames: string[] = [];
  const bareNames = new Set<string>();
  let star = false;
  let refused = false;
  let classifies = false;
  const lastName = (names: unknown) => {
    const last = Array.isArray(names) ? (names[names.length - 1] as PgObject | undefined) : undefined;
    return last !== undefined && 'String' in last ? String((last.String as PgObject).sval).toLowerCase() : '';
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as PgObject)) {
      const object = value as PgObject;
      if (key === 'RangeVar') {
        const alias = object.alias as PgObject | undefined;
        ranges.push({
          catalog: object.catalogname as string | undefined, schema: object.schemaname as string | undefined, name: String(object.relname),
          alias: alias === undefined ? undefined : String(alias.aliasname), aliasColumns: Array.isArray(alias?.colnames),
          inherited: object.inh === true, location: Number(object.location),
        });
      } else if (key === 'CommonTableExpr') {
        cteNames.push(String(object.ctename));
      } else if (key === 'JoinExpr' && object.isNatural === true) {
        // a natural join joins on every column two relations share, not only those read
        refused = true;
      } else if (key === 'FuncCall' && CLASSIFYING_FUNCTIONS.test(lastName(object.funcname))) {
        classifies = true;
      } else if (key === 'A_Expr' && (object.kind === 'AEXPR_ILIKE' || object.kind === 'AEXPR_SIMILAR' || CLASSIFYING_OPERATORS.has(lastName(object.name)))) {
        classifies = true;
      } else if (key === 'ColumnRef') {
        const fields = Array.isArray(object.fields) ? (object.fields as PgObject[]) : [];
        if (fields.some((field) => 'A_Star' in field)) star = true;
        // schema.relation.column names a relation that is not there any more
        if (fields.length > 2) refused = true;
        const [first] = fields;
        if (fields.length === 1 && first !== undefined && 'String' in first) bareNames.add(String((first.String as PgObject).sval).toLowerCase());
      }
      visit(value);
    }
  };
  visit(root);
  return refused ? undefined : { ranges, cteNames, star, bareNames, classifies };
}

/**
 * The statement with each edit applied, each `$n` a `?` (knex's form, as a datasource runs it) and every
 * other `?` escaped; undefined where a name is not where the parse said.
 */
function splice(text: string, edits: readonly Edit[]): { sql: string; bindings: ShippedBinding[] } | undefined {
  const bytes = Buffer.from(text, 'utf8');
  const tokens = scanSync(text).tokens;
  const at = new Map(edits.map((edit) => [edit.location, edit]));
  const out: string[] = [];
  const bindings: ShippedBinding[] = [];
  const copy = (from: number, to: number) => out.push(bytes.subarray(from, to).toString('utf8').replaceAll('?', '\\?'));
  let position = 0;
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index] as { start: number; end: number; tokenName: string };
    const edit = at.get(token.start);
    if (edit !== undefined) {
      const last = tokens[index + edit.parts - 1] as { end: number } | undefined;
      if (last === undefined) return undefined;
      copy(position, token.start);
      for (const piece of edit.pieces) {
        if (typeof piece === 'string') {
          out.push(piece);
        } else {
          out.push('?');
          bindings.push(piece);
        }
      }
      at.delete(token.start);
      position = last.end;
      index += edit.parts - 1;
    } else if (token.tokenName === 'PARAM') {
      copy(position, token.start);
      out.push('?');
      bindings.push({ value: Number(bytes.subarray(token.start + 1, token.end).toString('utf8')) - 1 });
      position = token.end;
    }
  }
  if (at.size > 0) return undefined;
  copy(position, bytes.length);
  return { sql: out.join(''), bindings };
}
