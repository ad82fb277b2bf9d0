/**
 * Writes a federated statement, parsed by PostgreSQL's own grammar, as the SQL the engine (DuckDB) runs
 * over the rows the sources returned, with PostgreSQL's semantics (docs/federation.md#postgresql-semantics).
 * The writer is the allow-list: it writes only the constructs whose meaning it knows to be the same in the
 * engine, rewritten where the engine's default differs (NULL ordering, LIKE's escape, integer division,
 * division by zero, the output names), and refuses every other with `federation_unsupported` naming it.
 */
import { InputError } from '../plugin-api/errors.js';

type PgObject = { [field: string]: unknown };

/**
 * The engine's view of a value's type, as far as the writer can tell: `decimal` a numeric of a fixed scale,
 * `numeric` one whose values each have their own (an unconstrained `numeric` column, held at a fixed scale).
 */
export type EngineType =
  | 'integer' | 'bigint' | 'decimal' | 'numeric' | 'float' | 'string' | 'boolean' | 'date' | 'time' | 'timestamp' | 'timestamptz' | 'uuid' | 'unknown'
  /** PostgreSQL's char(n), padded with spaces to n as PostgreSQL writes it; compared and measured without them. */
  | 'char'
  /** An `avg` or numeric `/` of an inner level, still its exact operands `{a, b}`: only passed on, to the outermost SELECT's output. */
  | 'quotient';

/** A relation of a source as the engine holds it: its table and typed columns. */
export interface EngineTable {
  /** The engine's table for the relation's rows. */
  readonly table: string;
  readonly columns: ReadonlyMap<string, EngineType>;
}

/** What the writer needs from the plan: which engine table a relation reference reads. */
export interface TableLookup {
  /** The table of `schema.name` (schema absent when unqualified), or undefined when it is no relation of the VDB. */
  table(schema: string | undefined, name: string): EngineTable | undefined;
}

/** One output column: its name as PostgreSQL names it, and its type. */
interface Output {
  readonly name: string;
  readonly type: EngineType;
  /**
   * A division PostgreSQL answers as numeric (an `avg`, a numeric `/`) in the outermost SELECT: the engine
   * answers its exact operands `{a, b}`, which `postgresDivide` divides.
   */
  readonly quotient?: true;
}

interface Written {
  readonly sql: string;
  readonly type: EngineType;
}

/** A range of a FROM clause: its alias and columns (undefined where unknown). */
interface Range {
  readonly alias: string;
  readonly columns: ReadonlyMap<string, EngineType> | undefined;
}

/** One query level: its ranges, the CTEs in view, and the level it is nested in. */
interface Level {
  readonly ranges: Range[];
  readonly ctes: ReadonlyMap<string, Output[]>;
  readonly parent: Level | undefined;
}

/** 400 `federation_unsupported`: a construct the engine cannot evaluate with PostgreSQL's semantics. */
/** The name of the engine column that stands for a row when a relation's columns are not read. */
export const ROW_MARK_COLUMN = 'vdb_row';

export function unsupported(construct: string): InputError {
  return new InputError('federation_unsupported', `${construct} is not supported in a statement over several datasources`, {
    details: { construct },
  });
}

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);
const ASCII_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const CONCAT_TYPES = new Set<EngineType>(['string', 'integer', 'bigint', 'decimal', 'date']);
/** The types whose text `||` writes alike in both (a boolean `true`, as its cast, unlike concat's `t`). */
const CONCATENATED_TYPES = new Set<EngineType>([...CONCAT_TYPES, 'unknown', 'boolean', 'timestamp', 'timestamptz', 'uuid']);
/** Ranking functions, which need OVER; with them, the aggregates that may take one. */
const RANKING = new Set(['row_number', 'rank', 'dense_rank']);
/** Window functions that read a value of another row of the partition: the same rows in both. */
const OFFSET_FUNCTIONS = new Set(['lag', 'lead', 'first_value', 'last_value']);
const WINDOW_FUNCTIONS = new Set([...RANKING, ...OFFSET_FUNCTIONS, 'count', 'sum', 'min', 'max', 'bool_and', 'bool_or']);
/** `frameOptions` of a window without a frame clause: RANGE UNBOUNDED PRECEDING to CURRENT ROW, peers included. */
const DEFAULT_FRAME = 1058;
/**
 * Fields `extract` and `date_part` answer alike in both, from a date or a timestamp, with or without time zone
 * (a `timestamptz` in the session's time zone, UTC in both: the service's sessions and the engine's run in UTC).
 */
const DATE_PARTS = new Set(['year', 'quarter', 'month', 'week', 'day', 'dow', 'doy', 'hour', 'minute']);
/** `date_trunc`'s units whose truncation is the same in both (weeks from Monday, quarters from January; a `timestamptz` in UTC). */
const TRUNCATION_UNITS = new Set(['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'milliseconds', 'microseconds']);
const INTEGRAL = new Set<EngineType>(['integer', 'bigint']);
const NUMERIC = new Set<EngineType>(['integer', 'bigint', 'decimal', 'numeric', 'float']);

/** Casts the writer allows, by PostgreSQL type name: the engine type and the types it may convert from exactly. */
const CASTS: Readonly<Record<string, { sql: string; type: EngineType; from: readonly EngineType[] }>> = {
  int2: { sql: 'INTEGER', type: 'integer', from: ['integer', 'bigint', 'decimal', 'numeric', 'string'] },
  int4: { sql: 'INTEGER', type: 'integer', from: ['integer', 'bigint', 'decimal', 'numeric', 'string'] },
  int8: { sql: 'BIGINT', type: 'bigint', from: ['integer', 'bigint', 'decimal', 'numeric', 'string'] },
  // not an unconstrained numeric: its text is each value's own scale in PostgreSQL, the engine's fixed one there
  text: { sql: 'VARCHAR', type: 'string', from: ['integer', 'bigint', 'decimal', 'string', 'date', 'boolean', 'uuid'] },
  varchar: { sql: 'VARCHAR', type: 'string', from: ['integer', 'bigint', 'decimal', 'string', 'date', 'boolean', 'uuid'] },
  bool: { sql: 'BOOLEAN', type: 'boolean', from: ['boolean', 'string'] },
  // between instants and wall-clock times in UTC, the session's time zone in both
  date: { sql: 'DATE', type: 'date', from: ['date', 'string', 'timestamp', 'timestamptz'] },
  timestamp: { sql: 'TIMESTAMP', type: 'timestamp', from: ['date', 'string', 'timestamp', 'timestamptz'] },
  timestamptz: { sql: 'TIMESTAMPTZ', type: 'timestamptz', from: ['date', 'string', 'timestamp', 'timestamptz'] },
  float8: { sql: 'DOUBLE', type: 'float', from: ['integer', 'bigint', 'decimal', 'numeric', 'float', 'string'] },
};

/**
 * Writes `statement` (a SelectStmt node's fields) for the engine; throws `federation_unsupported`. The
 * outputs marked `quotient` are answered by the engine as `{a, b}`, exact operands for `postgresDivide`.
 */
export function engineSql(statement: PgObject, tables: TableLookup): { sql: string; outputs: Output[]; exactParameters: ExactParameter[] } {
  const writer = new EngineWriter(tables);
  return { ...writer.select(statement, undefined, undefined, true), exactParameters: [...writer.exactParameters].map(([number, type]) => ({ number, type })) };
}

/** A bound value (`$number` of the engine's statement) PostgreSQL reads as the type of a number beside it. */
export interface ExactParameter {
  readonly number: number;
  readonly type: 'numeric' | 'integer' | 'bigint';
}

/**
 * The most digits a bound value beside a numeric holds in the engine: PostgreSQL reads it as an unconstrained
 * numeric, the engine as `DECIMAL(38, EXACT_SCALE)`; a value with more is refused as the plan runs.
 */
export const EXACT_SCALE = 18;

/**
 * `dividend / divisor` (decimal texts, each with its own scale) as PostgreSQL's numeric division answers it
 * (select_div_scale, then rounding half away from zero): at least 16 significant digits, never fewer
 * fractional digits than either operand's. Null when either is null.
 * @throws Error `division by zero` for a divisor of zero, as PostgreSQL raises division_by_zero (22012).
 */
export function postgresDivide(dividend: string | null, divisor: string | null): string | null {
  if (dividend === null || divisor === null) return null;
  const [sign1, whole1, fraction1] = decimalParts(dividend);
  const [sign2, whole2, fraction2] = decimalParts(divisor);
  const denominatorDigits = BigInt(whole2 + fraction2);
  if (denominatorDigits === 0n) throw new Error('division by zero');
  const [weight1, first1] = baseWeight(whole1, fraction1);
  const [weight2, first2] = baseWeight(whole2, fraction2);
  const qweight = weight1 - weight2 - (first1 <= first2 ? 1 : 0);
  const scale = Math.min(Math.max(16 - qweight * 4, fraction1.length, fraction2.length, 0), 1000);
  const numerator = BigInt(whole1 + fraction1) * 10n ** BigInt(scale + fraction2.length);
  const denominator = denominatorDigits * 10n ** BigInt(fraction1.length);
  let quotient = numerator / denominator;
  if ((numerator % denominator) * 2n >= denominator) quotient += 1n;
  const digits = quotient.toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return sign1 !== sign2 && quotient !== 0n ? `-${text}` : text;
}

/** A decimal text as its sign, integer digits and fractional digits. */
function decimalParts(text: string): [boolean, string, string] {
  const [whole = '', fraction = ''] = text.trim().replace(/^[-+]/, '').split('.');
  return [text.trim().startsWith('-'), whole === '' ? '0' : whole, fraction];
}

/** PostgreSQL's weight (in base-10000 digits) and first base-10000 digit of a non-negative decimal; zero is [0, 0]. */
function baseWeight(whole: string, fraction: string): [number, number] {
  const integer = whole.replace(/^0+/, '');
  if (integer !== '') {
    const padded = '0'.repeat((4 - (integer.length % 4)) % 4) + integer;
    return [padded.length / 4 - 1, Number(padded.slice(0, 4))];
  }
  const padded = fraction + '0'.repeat((4 - (fraction.length % 4)) % 4);
  for (let index = 0; index < padded.length; index += 4) {
    const digit = Number(padded.slice(index, index + 4));
    if (digit !== 0) return [-(index / 4) - 1, digit];
  }
  return [0, 0];
}

/** Quotes an identifier for the engine. */
export function engineIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function unwrap(node: unknown): [string, PgObject] {
  const [type, value] = Object.entries(node as PgObject)[0] ?? ['', {}];
  return [type, value as PgObject];
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function stringsOf(value: unknown): string[] {
  return list(value).map((item) => {
    const [type, node] = unwrap(item);
    if (type !== 'String') throw unsupported(type);
    return String(node.sval);
  });
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

class EngineWriter {
  /** The `$n` read beside a number, with the type PostgreSQL gives them: bound as checked text (federated-run.ts). */
  readonly exactParameters = new Map<number, ExactParameter['type']>();

  constructor(private readonly tables: TableLookup) {}

  /**
   * Operands of one comparison or arithmetic: a bound value beside a number is read as PostgreSQL reads it.
   * Beside a numeric, an unconstrained numeric, not at the column's scale (the engine would cast `5.549` to a
   * `DECIMAL(10,2)`'s `5.55` and find it not greater than 5.55); beside an integer, an integer of that type,
   * whose text must be one (the engine would round `6.5` to 7 where PostgreSQL raises 22P02).
   */
  private exactBesideNumeric(operands: readonly Written[], nodes: readonly unknown[]): Written[] {
    const type: ExactParameter['type'] | undefined = operands.some((operand) => operand.type === 'decimal' || operand.type === 'numeric') ? 'numeric'
      : operands.some((operand) => operand.type === 'float') ? undefined
        : operands.some((operand) => operand.type === 'bigint') ? 'bigint' : operands.some((operand) => operand.type === 'integer') ? 'integer' : undefined;
    if (type === undefined) return [...operands];
    return operands.map((operand, index) => {
      const [kind, node] = unwrap(nodes[index]);
      if (kind !== 'ParamRef' || operand.type !== 'unknown') return operand;
      const number = Number(node.number);
      // read as numeric once anywhere, it is bound as its exact text, which an integer's cast reads too
      if (this.exactParameters.get(number) !== 'numeric') this.exactParameters.set(number, type);
      return type === 'numeric'
        ? { sql: `CAST(${operand.sql} AS DECIMAL(38,${EXACT_SCALE}))`, type: 'numeric' }
        : { sql: `CAST(${operand.sql} AS ${type === 'bigint' ? 'BIGINT' : 'INTEGER'})`, type };
    });
  }

  select(node: PgObject, parent: Level | undefined, inheritedCtes?: ReadonlyMap<string, Output[]>, outermost = false): { sql: string; outputs: Output[] } {
    if (node.intoClause !== undefined) throw unsupported('SELECT INTO');
    if (list(node.lockingClause).length > 0) throw unsupported('FOR UPDATE/SHARE');
    if (node.valuesLists !== undefined) throw unsupported('VALUES');
    const ctes = new Map(inheritedCtes ?? parent?.ctes ?? []);
    let withSql = '';
    if (node.withClause !== undefined) {
      const clause = node.withClause as PgObject;
      if (clause.recursive === true) throw unsupported('WITH RECURSIVE');
      const parts: string[] = [];
      for (const item of list(clause.ctes)) {
        const [, cte] = unwrap(item);
        const name = String(cte.ctename);
        const [queryType, query] = unwrap(cte.ctequery);
        if (queryType !== 'SelectStmt') throw unsupported(`a ${queryType} in WITH`);
        const written = this.select(query, parent, ctes);
        const names = stringsOf(cte.aliascolnames);
        const outputs = written.outputs.map((output, index) => ({ name: names[index] ?? output.name, type: output.type }));
        ctes.set(name, outputs);
        const columns = names.length > 0 ? `(${names.map(engineIdentifier).join(', ')})` : '';
        parts.push(`${engineIdentifier(name)}${columns} AS (${written.sql})`);
      }
      withSql = `WITH ${parts.join(', ')} `;
    }
    const op = String(node.op ?? 'SETOP_NONE');
    let body: { sql: string; outputs: Output[] };
    let level: Level;
    if (op !== 'SETOP_NONE') {
      const setOp = { SETOP_UNION: 'UNION', SETOP_INTERSECT: 'INTERSECT', SETOP_EXCEPT: 'EXCEPT' }[op];
      if (setOp === undefined) throw unsupported(op);
      const left = this.select(node.larg as PgObject, parent, ctes);
      const right = this.select(node.rarg as PgObject, parent, ctes);
      if (left.outputs.some((output, index) => (output.type === 'char') !== (right.outputs[index]?.type === 'char'))) throw unsupported(`${setOp} of a char(n) value with a value of another type`);
      const divisions = left.outputs.map((output, index) => output.type === 'quotient' || right.outputs[index]?.type === 'quotient');
      if (divisions.some(Boolean)) {
        // operands are not their quotient: 1/2 and 2/4 are one value to UNION, INTERSECT and EXCEPT
        if (setOp !== 'UNION' || node.all !== true) throw unsupported(`${setOp} over avg or a numeric division`);
        if (divisions.some((division, index) => division && (left.outputs[index]?.type !== 'quotient' || right.outputs[index]?.type !== 'quotient'))) {
          throw unsupported('UNION ALL of avg or a numeric division with another value');
        }
      }
      const outputs = outermost ? left.outputs.map((output): Output => (output.type === 'quotient' ? { name: output.name, type: 'decimal', quotient: true } : output)) : left.outputs;
      body = { sql: `(${left.sql}) ${setOp}${node.all === true ? ' ALL' : ''} (${right.sql})`, outputs };
      // ORDER BY of a set operation names its output columns
      level = { ranges: [{ alias: '', columns: new Map(left.outputs.map((output) => [output.name, output.type])) }], ctes, parent };
    } else {
      level = { ranges: [], ctes, parent };
      body = this.simpleSelect(node, level, outermost);
    }
    let sql = withSql + body.sql;
    const sorts = list(node.sortClause);
    if (sorts.length > 0) sql += ` ORDER BY ${sorts.map((sort) => this.sortBy(sort, level, body.outputs)).join(', ')}`;
    const option = String(node.limitOption ?? 'LIMIT_OPTION_DEFAULT');
    if (option === 'LIMIT_OPTION_WITH_TIES') throw unsupported('FETCH ... WITH TIES');
    if (node.limitCount !== undefined) sql += ` LIMIT ${this.bound(node.limitCount, level, 'LIMIT')}`;
    if (node.limitOffset !== undefined) sql += ` OFFSET ${this.bound(node.limitOffset, level, 'OFFSET')}`;
    return { sql, outputs: body.outputs };
  }

  private bound(node: unknown, level: Level, clause: string): string {
    const [type, value] = unwrap(node);
    if (type === 'A_Const' && value.isnull === true) return 'NULL';
    const written = this.expr(node, level);
    if (!INTEGRAL.has(written.type) && type !== 'ParamRef') throw unsupported(`${clause} of a non-integer value`);
    return written.sql;
  }

  private simpleSelect(node: PgObject, level: Level, outermost: boolean): { sql: string; outputs: Output[] } {
    const from = list(node.fromClause).map((item) => this.fromItem(item, level));
    const targets: string[] = [];
    const outputs: Output[] = [];
    for (const item of list(node.targetList)) {
      const [, target] = unwrap(item);
      const star = this.star(target.val, level, outermost);
      if (star !== undefined) {
        targets.push(star.sql);
        outputs.push(...star.outputs);
        continue;
      }
      const name = target.name === undefined ? outputName(target.val) : String(target.name);
      // an inner level's division stays its operands, passed on as they are to the outermost SELECT
      const quotient = this.average(target.val, level) ?? this.quotient(target.val, level) ?? (outermost ? this.passedQuotient(target.val, level) : undefined);
      const written = quotient ?? this.expr(target.val, level);
      targets.push(`${written.sql} AS ${engineIdentifier(name)}`);
      outputs.push(quotient && outermost ? { name, type: 'decimal', quotient: true } : { name, type: quotient ? 'quotient' : written.type });
    }
    let sql = 'SELECT ';
    const distinct = node.distinctClause;
    if (distinct !== undefined) {
      if (outputs.some((output) => output.quotient || output.type === 'quotient')) throw unsupported('DISTINCT over avg or a numeric division');
      const on = list(distinct).filter((item) => item !== null && Object.keys(item as PgObject).length > 0);
      sql += on.length === 0 ? 'DISTINCT ' : `DISTINCT ON (${on.map((item) => this.expr(item, level).sql).join(', ')}) `;
    }
    sql += targets.join(', ');
    if (from.length > 0) sql += ` FROM ${from.join(', ')}`;
    if (node.whereClause !== undefined) sql += ` WHERE ${this.expr(node.whereClause, level).sql}`;
    const groups = list(node.groupClause);
    if (groups.length > 0) {
      if (node.groupDistinct === true) throw unsupported('GROUP BY DISTINCT');
      sql += ` GROUP BY ${groups.map((group) => {
        const [type] = unwrap(group);
        if (type === 'GroupingSet') throw unsupported('GROUPING SETS, ROLLUP and CUBE');
        return this.expr(group, level).sql;
      }).join(', ')}`;
    }
    if (node.havingClause !== undefined) sql += ` HAVING ${this.expr(node.havingClause, level).sql}`;
    if (list(node.windowClause).length > 0) throw unsupported('WINDOW');
    return { sql, outputs };
  }

  /** `*` or `alias.*` in a target list, written as the engine expands it (the same columns, in order). */
  private star(value: unknown, level: Level, outermost: boolean): { sql: string; outputs: Output[] } | undefined {
    const [type, node] = unwrap(value);
    if (type !== 'ColumnRef') return undefined;
    const fields = list(node.fields);
    const last = fields[fields.length - 1];
    if (last === undefined || unwrap(last)[0] !== 'A_Star') return undefined;
    const qualifier = fields.slice(0, -1).map((field) => String(unwrap(field)[1].sval));
    const ranges = qualifier.length === 0 ? level.ranges : level.ranges.filter((range) => range.alias === qualifier[qualifier.length - 1]);
    const outputs: Output[] = [];
    for (const range of ranges) {
      if (range.columns === undefined) throw unsupported('* over a range whose columns the plan cannot tell');
      for (const [name, columnType] of range.columns) {
        outputs.push(columnType === 'quotient' && outermost ? { name, type: 'decimal', quotient: true } : { name, type: columnType });
      }
    }
    const alias = qualifier[qualifier.length - 1];
    return { sql: alias === undefined ? '*' : `${engineIdentifier(alias)}.*`, outputs };
  }

  private fromItem(item: unknown, level: Level): string {
    const [type, node] = unwrap(item);
    switch (type) {
      case 'RangeVar': {
        const name = String(node.relname);
        const schema = node.schemaname === undefined ? undefined : String(node.schemaname);
        const alias = node.alias === undefined ? name : String((node.alias as PgObject).aliasname);
        const renamed = node.alias === undefined ? [] : stringsOf((node.alias as PgObject).colnames);
        if (schema === undefined && level.ctes.has(name)) {
          const outputs = level.ctes.get(name) as Output[];
          level.ranges.push({ alias, columns: renamedColumns(outputs, renamed) });
          return `${engineIdentifier(name)} AS ${engineIdentifier(alias)}${columnAliases(renamed)}`;
        }
        const table = this.tables.table(schema, name);
        if (table === undefined) throw unsupported(`relation ${schema === undefined ? name : `${schema}.${name}`}`);
        const outputs = [...table.columns].map(([column, columnType]) => ({ name: column, type: columnType }));
        level.ranges.push({ alias, columns: renamedColumns(outputs, renamed) });
        return `${engineIdentifier(table.table)} AS ${engineIdentifier(alias)}${columnAliases(renamed)}`;
      }
      case 'RangeSubselect': {
        if (node.lateral === true) throw unsupported('LATERAL');
        if (node.alias === undefined) throw unsupported('a subquery in FROM without an alias');
        const alias = String((node.alias as PgObject).aliasname);
        const renamed = stringsOf((node.alias as PgObject).colnames);
        const [subType, sub] = unwrap(node.subquery);
        if (subType !== 'SelectStmt') throw unsupported(subType);
        const written = this.select(sub, level.parent === undefined ? { ranges: [], ctes: level.ctes, parent: undefined } : level.parent, level.ctes);
        level.ranges.push({ alias, columns: renamedColumns(written.outputs, renamed) });
        return `(${written.sql}) AS ${engineIdentifier(alias)}${columnAliases(renamed)}`;
      }
      case 'JoinExpr': {
        if (node.isNatural === true) throw unsupported('NATURAL JOIN');
        if (node.alias !== undefined || node.join_using_alias !== undefined) throw unsupported('an alias on a JOIN');
        const kind = { JOIN_INNER: 'JOIN', JOIN_LEFT: 'LEFT JOIN', JOIN_RIGHT: 'RIGHT JOIN', JOIN_FULL: 'FULL JOIN' }[String(node.jointype)];
        if (kind === undefined) throw unsupported(String(node.jointype));
        const left = this.fromItem(node.larg, level);
        const right = this.fromItem(node.rarg, level);
        const using = stringsOf(node.usingClause);
        // USING compares with =, which PostgreSQL makes a char(n)'s comparison without its padding
        if (using.some((name) => level.ranges.some((range) => range.columns?.get(name) === 'char'))) throw unsupported('USING on a char(n) column');
        if (using.length > 0) return `${left} ${kind} ${right} USING (${using.map(engineIdentifier).join(', ')})`;
        if (node.quals === undefined) return kind === 'JOIN' ? `${left} CROSS JOIN ${right}` : `${left} ${kind} ${right} ON TRUE`;
        return `${left} ${kind} ${right} ON ${this.expr(node.quals, level).sql}`;
      }
      default:
        throw unsupported(`${type} in FROM`);
    }
  }

  private sortBy(item: unknown, level: Level, outputs: readonly Output[]): string {
    const [, sort] = unwrap(item);
    if (sort.sortby_dir === 'SORTBY_USING') throw unsupported('ORDER BY ... USING');
    const [type, node] = unwrap(sort.node);
    let sql: string;
    const named = type === 'ColumnRef' && list(node.fields).length === 1 ? String(unwrap(list(node.fields)[0])[1].sval) : undefined;
    const output = type === 'A_Const' && node.ival !== undefined
      ? outputs[Number((node.ival as PgObject).ival ?? 0) - 1]
      : outputs.find((candidate) => candidate.name === named);
    if (output?.quotient || output?.type === 'quotient') throw unsupported('ORDER BY an avg or a numeric division');
    if (type === 'A_Const' && node.ival !== undefined) {
      sql = this.expr(sort.node, level).sql;
    } else if (named !== undefined && output !== undefined) {
      // an output column by name, as PostgreSQL resolves ORDER BY names first
      sql = engineIdentifier(named);
    } else {
      sql = this.expr(sort.node, level).sql;
    }
    const descending = sort.sortby_dir === 'SORTBY_DESC';
    // PostgreSQL: NULLs sort as larger than every value unless told otherwise
    const nullsFirst = sort.sortby_nulls === 'SORTBY_NULLS_DEFAULT' || sort.sortby_nulls === undefined ? descending : sort.sortby_nulls === 'SORTBY_NULLS_FIRST';
    return `${sql} ${descending ? 'DESC' : 'ASC'} NULLS ${nullsFirst ? 'FIRST' : 'LAST'}`;
  }

  private expr(value: unknown, level: Level): Written {
    const [type, node] = unwrap(value);
    switch (type) {
      case 'ColumnRef': return this.column(node, level);
      case 'A_Const': return constant(node);
      case 'ParamRef': return { sql: `$${Number(node.number)}`, type: 'unknown' };
      case 'A_Expr': return this.operator(node, level);
      case 'BoolExpr': {
        const args = list(node.args).map((arg) => this.expr(arg, level).sql);
        if (node.boolop === 'NOT_EXPR') return { sql: `(NOT ${args[0]})`, type: 'boolean' };
        return { sql: `(${args.join(node.boolop === 'AND_EXPR' ? ' AND ' : ' OR ')})`, type: 'boolean' };
      }
      case 'NullTest': {
        if (node.argisrow === true) throw unsupported('IS NULL on a row');
        return { sql: `(${this.expr(node.arg, level).sql} IS ${node.nulltesttype === 'IS_NOT_NULL' ? 'NOT ' : ''}NULL)`, type: 'boolean' };
      }
      case 'BooleanTest': {
        const arg = this.expr(node.arg, level).sql;
        const test = {
          IS_TRUE: 'IS NOT DISTINCT FROM TRUE', IS_NOT_TRUE: 'IS DISTINCT FROM TRUE', IS_FALSE: 'IS NOT DISTINCT FROM FALSE',
          IS_NOT_FALSE: 'IS DISTINCT FROM FALSE', IS_UNKNOWN: 'IS NULL', IS_NOT_UNKNOWN: 'IS NOT NULL',
        }[String(node.booltesttype)];
        if (test === undefined) throw unsupported(String(node.booltesttype));
        return { sql: `(${arg} ${test})`, type: 'boolean' };
      }
      case 'FuncCall': return this.call(node, level);
      case 'TypeCast': return this.cast(node, level);
      case 'CaseExpr': {
        const subject = node.arg === undefined ? '' : ` ${this.expr(node.arg, level).sql}`;
        const resultTypes: EngineType[] = [];
        const whens = list(node.args).map((item) => {
          const [, when] = unwrap(item);
          const result = this.expr(when.result, level);
          resultTypes.push(result.type);
          return ` WHEN ${this.expr(when.expr, level).sql} THEN ${result.sql}`;
        }).join('');
        const fallback = node.defresult === undefined ? undefined : this.expr(node.defresult, level);
        if (fallback) resultTypes.push(fallback.type);
        const otherwise = fallback ? ` ELSE ${fallback.sql}` : '';
        // every branch counts, as PostgreSQL resolves a CASE: THEN 0 ELSE a numeric is numeric, not integer
        return { sql: `(CASE${subject}${whens}${otherwise} END)`, type: widest(resultTypes) };
      }
      case 'CoalesceExpr': return this.variadic('COALESCE', node.args, level);
      case 'MinMaxExpr': return this.variadic(node.op === 'IS_GREATEST' ? 'GREATEST' : 'LEAST', node.args, level);
      case 'SubLink': return this.subLink(node, level);
      // CURRENT_DATE, now(), LOCALTIMESTAMP…: the engine's clock is not the source's
      case 'SQLValueFunction': throw unsupported(String(node.op ?? type).replace(/^SVFOP_/, ''));
      default:
        throw unsupported(type);
    }
  }

  private variadic(name: string, args: unknown, level: Level): Written {
    const written = list(args).map((arg) => this.expr(arg, level));
    return { sql: `${name}(${written.map((arg) => arg.sql).join(', ')})`, type: widest(written.map((arg) => arg.type)) };
  }

  /** A column reference; `passing`: it may be an inner level's division, passed on as an output column. */
  private column(node: PgObject, level: Level, passing = false): Written {
    const names = list(node.fields).map((field) => {
      const [type, value] = unwrap(field);
      if (type !== 'String') throw unsupported('* outside a target list');
      return String(value.sval);
    });
    const name = names[names.length - 1] as string;
    if (names.length > 3) throw unsupported('a column reference with a catalog name');
    const qualifier = names.length >= 2 ? names[names.length - 2] : undefined;
    for (let current: Level | undefined = level; current; current = current.parent) {
      const matches = current.ranges.filter((range) => (qualifier === undefined || range.alias === qualifier)
        && (range.columns === undefined || range.columns.has(name)));
      if (matches.length === 0) continue;
      const range = matches[0] as Range;
      const type = matches.length === 1 ? range.columns?.get(name) ?? 'unknown' : 'unknown';
      if (type === 'quotient' && !passing) throw unsupported('avg or a numeric division of a subquery or CTE read other than as an output column');
      return { sql: qualifier === undefined ? engineIdentifier(name) : `${engineIdentifier(qualifier)}.${engineIdentifier(name)}`, type };
    }
    if (qualifier !== undefined) throw unsupported(`column reference ${names.join('.')}`);
    // a column of no range in view: the engine answers the missing column as PostgreSQL would refuse it
    return { sql: engineIdentifier(name), type: 'unknown' };
  }

  /**
   * A timestamp or a date moved by an interval constant (`o.at - interval '30 days'`): months first (the day
   * clamped to the month's last), then days, then time, as PostgreSQL adds them; a timestamp without time zone
   * in both, a timestamptz moved in UTC. Undefined when neither operand is an interval.
   */
  private shift(op: '+' | '-', node: PgObject, level: Level): Written | undefined {
    const right = intervalConstant(node.rexpr);
    const left = op === '+' ? intervalConstant(node.lexpr) : undefined;
    if (right === undefined && left === undefined) return undefined;
    if (right !== undefined && left !== undefined) throw unsupported('arithmetic between intervals');
    const moved = this.expr(right === undefined ? node.rexpr : node.lexpr, level);
    // a timestamptz's months and days are counted in the session's time zone: UTC in both
    if (moved.type === 'timestamptz') return { sql: `CAST((${moved.sql} ${op} ${right ?? left}) AS TIMESTAMPTZ)`, type: 'timestamptz' };
    if (moved.type !== 'timestamp' && moved.type !== 'date') throw unsupported(`an interval ${op === '+' ? 'added to' : 'subtracted from'} a value of type ${moved.type}`);
    return { sql: `CAST((${moved.sql} ${op} ${right ?? left}) AS TIMESTAMP)`, type: 'timestamp' };
  }

  private operator(node: PgObject, level: Level): Written {
    const kind = String(node.kind);
    const op = stringsOf(node.name).at(-1) ?? '';
    switch (kind) {
      case 'AEXPR_OP': {
        if (node.lexpr === undefined) {
          const operand = this.expr(node.rexpr, level);
          if (op === '-' && NUMERIC.has(operand.type)) return { sql: `(- ${operand.sql})`, type: operand.type };
          if (op === '+' && NUMERIC.has(operand.type)) return operand;
          throw unsupported(`prefix operator ${op}`);
        }
        const shifted = op === '+' || op === '-' ? this.shift(op, node, level) : undefined;
        if (shifted) return shifted;
        const [left, right] = this.exactBesideNumeric([this.expr(node.lexpr, level), this.expr(node.rexpr, level)], [node.lexpr, node.rexpr]) as [Written, Written];
        if (COMPARISONS.has(op)) {
          const [a, b] = compared([left, right], [node.lexpr, node.rexpr]);
          return { sql: `(${a} ${op === '!=' ? '<>' : op} ${b})`, type: 'boolean' };
        }
        return arithmetic(op, left, right);
      }
      case 'AEXPR_OP_ANY':
      case 'AEXPR_OP_ALL': {
        // `x = ANY (ARRAY[a, b])` is `x IN (a, b)`, `x <> ALL (ARRAY[…])` `x NOT IN (…)`, NULLs alike; an array value is not
        const [arrayType, array] = unwrap(node.rexpr);
        const quantifier = kind === 'AEXPR_OP_ANY' ? 'ANY' : 'ALL';
        if (arrayType !== 'A_ArrayExpr' || op !== (quantifier === 'ANY' ? '=' : '<>')) throw unsupported(`${op} ${quantifier} other than = ANY or <> ALL of an ARRAY[…] of values`);
        const elements = list(array.elements);
        const [value, ...items] = compared(this.exactBesideNumeric([this.expr(node.lexpr, level), ...elements.map((item) => this.expr(item, level))], [node.lexpr, ...elements]), [node.lexpr, ...elements]);
        const left = { sql: value };
        if (items.length === 0) throw unsupported(`${op} ${quantifier} of an empty array`);
        return { sql: `(${left.sql} ${quantifier === 'ANY' ? 'IN' : 'NOT IN'} (${items.join(', ')}))`, type: 'boolean' };
      }
      case 'AEXPR_IN': {
        const rawItems = list((unwrap(node.rexpr)[1] as PgObject).items);
        const [left, ...items] = compared(this.exactBesideNumeric([this.expr(node.lexpr, level), ...rawItems.map((item) => this.expr(item, level))], [node.lexpr, ...rawItems]), [node.lexpr, ...rawItems]);
        return { sql: `(${left} ${op === '=' ? 'IN' : 'NOT IN'} (${items.join(', ')}))`, type: 'boolean' };
      }
      case 'AEXPR_BETWEEN':
      case 'AEXPR_NOT_BETWEEN':
      case 'AEXPR_BETWEEN_SYM':
      case 'AEXPR_NOT_BETWEEN_SYM': {
        const bounds = list((unwrap(node.rexpr)[1] as PgObject).items);
        const [value, low, high] = compared(this.exactBesideNumeric([this.expr(node.lexpr, level), ...bounds.map((item) => this.expr(item, level))], [node.lexpr, ...bounds]), [node.lexpr, ...bounds]);
        const left = { sql: value };
        const not = kind.startsWith('AEXPR_NOT') ? 'NOT ' : '';
        // SYMMETRIC: either order of the bounds, as PostgreSQL rewrites it
        if (kind.endsWith('_SYM')) return { sql: `(${not}((${left.sql} BETWEEN ${low} AND ${high}) OR (${left.sql} BETWEEN ${high} AND ${low})))`, type: 'boolean' };
        return { sql: `(${left.sql} ${not}BETWEEN ${low} AND ${high})`, type: 'boolean' };
      }
      case 'AEXPR_LIKE': {
        if (op !== '~~' && op !== '!~~') throw unsupported(`operator ${op}`);
        const left = notChar(this.expr(node.lexpr, level), 'LIKE');
        const pattern = this.expr(node.rexpr, level);
        // PostgreSQL's LIKE escapes with a backslash unless told otherwise; the engine's has no default escape
        return { sql: `(${left.sql} ${op === '!~~' ? 'NOT ' : ''}LIKE ${pattern.sql} ESCAPE '\\')`, type: 'boolean' };
      }
      case 'AEXPR_ILIKE': {
        if (op !== '~~*' && op !== '!~~*') throw unsupported(`operator ${op}`);
        // under collation "C" PostgreSQL lowers both sides (ASCII letters only) and matches them as LIKE does
        const left = asciiFold(notChar(this.expr(node.lexpr, level), 'ILIKE').sql, 'lower');
        const pattern = asciiFold(this.expr(node.rexpr, level).sql, 'lower');
        return { sql: `(${left} ${op === '!~~*' ? 'NOT ' : ''}LIKE ${pattern} ESCAPE '\\')`, type: 'boolean' };
      }
      case 'AEXPR_NULLIF': {
        const left = notChar(this.expr(node.lexpr, level), 'NULLIF');
        return { sql: `NULLIF(${left.sql}, ${this.expr(node.rexpr, level).sql})`, type: left.type };
      }
      case 'AEXPR_DISTINCT':
      case 'AEXPR_NOT_DISTINCT': {
        const [left, right] = compared([this.expr(node.lexpr, level), this.expr(node.rexpr, level)], [node.lexpr, node.rexpr]);
        return { sql: `(${left} IS ${kind === 'AEXPR_NOT_DISTINCT' ? 'NOT ' : ''}DISTINCT FROM ${right})`, type: 'boolean' };
      }
      default:
        throw unsupported(kind === 'AEXPR_SIMILAR' ? 'SIMILAR TO' : `operator ${op || kind}`);
    }
  }

  private call(node: PgObject, level: Level): Written {
    const names = stringsOf(node.funcname);
    const name = (names.at(-1) ?? '').toLowerCase();
    if (names.length > 1 && names[0] !== 'pg_catalog') throw unsupported(`function ${names.join('.')}`);
    if (list(node.agg_order).length > 0 || node.agg_within_group === true) throw unsupported(`ORDER BY inside ${name}()`);
    if (node.func_variadic === true) throw unsupported(`VARIADIC in ${name}()`);
    const over = node.over === undefined ? undefined : this.window(node.over as PgObject, level, name);
    const distinct = node.agg_distinct === true ? 'DISTINCT ' : '';
    const filter = node.agg_filter === undefined ? '' : ` FILTER (WHERE ${this.expr(node.agg_filter, level).sql})`;
    const windowed = (aggregate: string) => `${aggregate}${filter}${over ?? ''}`;
    if (over !== undefined && (distinct !== '' || !WINDOW_FUNCTIONS.has(name))) throw unsupported(`window function ${distinct === '' ? name : `${name}(DISTINCT ...)`}`);
    if (over === undefined && RANKING.has(name)) throw unsupported(`${name} without OVER`);
    if (RANKING.has(name)) {
      if (list(node.args).length > 0) throw unsupported(`${name} with arguments`);
      return { sql: windowed(`${name}()`), type: 'bigint' };
    }
    const args = list(node.args).map((arg) => this.expr(arg, level));
    if (OFFSET_FUNCTIONS.has(name)) return offsetFunction(name, args, over, filter);
    const argSql = args.map((arg) => arg.sql).join(', ');
    switch (name) {
      case 'count':
        if (node.agg_star === true) return { sql: windowed('count(*)'), type: 'bigint' };
        if (args.length !== 1) throw unsupported('count with several arguments');
        return { sql: windowed(`count(${distinct}${argSql})`), type: 'bigint' };
      case 'sum': {
        const arg = single(name, args);
        // PostgreSQL: sum(int) is bigint, sum(bigint) numeric, sum(numeric) numeric of the argument's scale
        const sum = windowed(`sum(${distinct}${arg.sql})`);
        if (arg.type === 'integer') return { sql: `CAST(${sum} AS BIGINT)`, type: 'bigint' };
        if (arg.type === 'bigint') return { sql: `CAST(${sum} AS DECIMAL(38,0))`, type: 'decimal' };
        if (arg.type === 'decimal' || arg.type === 'numeric') return { sql: sum, type: arg.type };
        // the engine adds doubles with compensation (ten 0.1 make 1), PostgreSQL one after another (0.9999999999999999)
        if (arg.type === 'float') throw unsupported('sum of double precision values');
        throw unsupported('sum over a value whose type the plan cannot tell');
      }
      case 'min':
      case 'max': {
        const arg = single(name, args);
        return { sql: windowed(`${name}(${distinct}${arg.sql})`), type: arg.type };
      }
      case 'bool_and':
      case 'bool_or':
        return { sql: windowed(`${name}(${single(name, args).sql})`), type: 'boolean' };
      case 'coalesce':
        return this.variadic('COALESCE', node.args, level);
      case 'abs': {
        const arg = single(name, args);
        if (!NUMERIC.has(arg.type)) throw unsupported('abs over a value whose type the plan cannot tell');
        return { sql: `abs(${arg.sql})`, type: arg.type };
      }
      case 'lower':
      case 'upper':
        // collation "C" folds ASCII letters only; the engine's lower/upper would fold every letter
        return { sql: asciiFold(unpadded(single(name, args)), name), type: 'string' };
      case 'substring':
      case 'substr':
        return substring(name, args);
      case 'strpos':
      case 'position': {
        // position(a IN b) is parsed as position(b, a), as strpos(b, a): both count characters from 1, 0 when absent
        const [text, sought] = textArguments(name, args, 2);
        return { sql: `CAST(instr(${text}, ${sought}) AS INTEGER)`, type: 'integer' };
      }
      case 'btrim':
      case 'ltrim':
      case 'rtrim': {
        // without characters both remove spaces only (not tabs or newlines); with them, any of their characters
        const trimmed = textArguments(name, args, args.length === 2 ? 2 : 1);
        return { sql: `${name === 'btrim' ? 'trim' : name}(${trimmed.join(', ')})`, type: 'string' };
      }
      case 'replace':
        // an empty pattern leaves the text as it is in both
        return { sql: `replace(${textArguments(name, args, 3).join(', ')})`, type: 'string' };
      case 'left':
      case 'right': {
        // a negative count keeps all but that many characters from the other end, in both
        const [text] = textArguments(name, args.slice(0, 1), 1);
        const count = args[1];
        if (args.length !== 2 || count === undefined || !INTEGRAL.has(count.type)) throw unsupported(`${name} other than of a text and an integer`);
        return { sql: `${name}(${text}, ${count.sql})`, type: 'string' };
      }
      case 'concat': {
        // NULLs are skipped in both; each argument's text is the same in both for these types
        const isNull = (raw: unknown) => unwrap(raw)[0] === 'A_Const' && unwrap(raw)[1].isnull === true;
        if (args.some((arg, index) => !CONCAT_TYPES.has(arg.type) && !isNull(list(node.args)[index]))) throw unsupported('concat of a value other than text, an integer, a numeric or a date');
        return { sql: `concat(${argSql})`, type: 'string' };
      }
      case 'length':
      case 'char_length':
        return { sql: `CAST(length(${unpadded(single(name, args))}) AS INTEGER)`, type: 'integer' };
      case 'round':
      case 'trunc': {
        // numeric rounding, half away from zero in both, and truncation toward zero; a double's round (half to
        // even in PostgreSQL) is refused. An unconstrained numeric's value keeps the engine's scale: equal values.
        const [value, places] = args;
        const exact = value?.type === 'decimal' || value?.type === 'numeric';
        if (value === undefined || !(exact || (name === 'trunc' && value.type === 'float' && places === undefined)) || args.length > 2) {
          throw unsupported(`${name} other than of a numeric${name === 'trunc' ? ' or a double' : ''}`);
        }
        const digits = list(node.args)[1];
        if (places !== undefined && !(unwrap(digits)[0] === 'A_Const' && places.type === 'integer')) throw unsupported(`${name} to a number of places that is not a constant`);
        return { sql: places === undefined ? `${name}(${value.sql})` : `${name}(${value.sql}, ${places.sql})`, type: value.type };
      }
      case 'timezone': {
        // `x AT TIME ZONE 'zone'`: an instant's wall-clock time there, or a wall-clock time there as an instant,
        // for a zone both read alike (an IANA name; PostgreSQL's abbreviations and POSIX offsets are its own)
        const [zone, value] = args;
        const [zoneType, zoneNode] = unwrap(list(node.args)[0]);
        const zoneName = zoneType === 'A_Const' && zoneNode.sval !== undefined ? String((zoneNode.sval as PgObject).sval) : '';
        if (args.length !== 2 || zone === undefined || !ZONES.has(zoneName) || (value?.type !== 'timestamp' && value?.type !== 'timestamptz')) {
          throw unsupported('AT TIME ZONE other than of a timestamp to a constant IANA time zone name');
        }
        return { sql: `timezone(${literal(zoneName)}, ${value.sql})`, type: value.type === 'timestamp' ? 'timestamptz' : 'timestamp' };
      }
      case 'extract':
      case 'date_part': {
        const [field, source] = list(node.args);
        const [fieldType, fieldNode] = unwrap(field);
        const part = fieldType === 'A_Const' && fieldNode.sval !== undefined ? String((fieldNode.sval as PgObject).sval).toLowerCase() : '';
        const from = args[1];
        if (!DATE_PARTS.has(part) || from === undefined || !['date', 'timestamp', 'timestamptz'].includes(from.type) || source === undefined) {
          throw unsupported(`${name} other than of ${[...DATE_PARTS].join(', ')} from a date or timestamp`);
        }
        // PostgreSQL: extract answers numeric, date_part double precision
        return name === 'extract'
          ? { sql: `CAST(extract(${part} FROM ${from.sql}) AS DECIMAL(38,0))`, type: 'decimal' }
          : { sql: `CAST(date_part('${part}', ${from.sql}) AS DOUBLE)`, type: 'float' };
      }
      case 'date_trunc': {
        // a timestamp's wall-clock time truncated; a timestamptz (and a date, which PostgreSQL reads as one, at
        // midnight) truncated in the session's time zone, UTC in both, answering a timestamptz
        const [field] = list(node.args);
        const [fieldType, fieldNode] = unwrap(field);
        const unit = fieldType === 'A_Const' && fieldNode.sval !== undefined ? String((fieldNode.sval as PgObject).sval).toLowerCase() : '';
        const from = args[1];
        if (!TRUNCATION_UNITS.has(unit) || args.length !== 2 || from === undefined || !['timestamp', 'timestamptz', 'date'].includes(from.type)) {
          throw unsupported(`date_trunc other than to ${[...TRUNCATION_UNITS].join(', ')} of a timestamp or a date`);
        }
        if (from.type === 'timestamp') return { sql: `CAST(date_trunc('${unit}', ${from.sql}) AS TIMESTAMP)`, type: 'timestamp' };
        return { sql: `CAST(date_trunc('${unit}', CAST(${from.sql} AS TIMESTAMPTZ)) AS TIMESTAMPTZ)`, type: 'timestamptz' };
      }
      default:
        throw unsupported(`function ${name}`);
    }
  }

  /** `OVER (...)` with PostgreSQL's default frame; a named window or another frame is refused. */
  private window(over: PgObject, level: Level, name: string): string {
    if (over.name !== undefined || over.refname !== undefined) throw unsupported(`a named window for ${name}`);
    const partition = list(over.partitionClause).map((item) => this.expr(item, level).sql);
    const order = list(over.orderClause).map((item) => {
      const [, sort] = unwrap(item);
      if (sort.sortby_dir === 'SORTBY_USING') throw unsupported('ORDER BY ... USING');
      const descending = sort.sortby_dir === 'SORTBY_DESC';
      const nullsFirst = sort.sortby_nulls === 'SORTBY_NULLS_DEFAULT' || sort.sortby_nulls === undefined ? descending : sort.sortby_nulls === 'SORTBY_NULLS_FIRST';
      return `${this.expr(sort.node, level).sql} ${descending ? 'DESC' : 'ASC'} NULLS ${nullsFirst ? 'FIRST' : 'LAST'}`;
    });
    const parts = [
      ...(partition.length > 0 ? [`PARTITION BY ${partition.join(', ')}`] : []),
      ...(order.length > 0 ? [`ORDER BY ${order.join(', ')}`] : []),
      ...(over.frameOptions === DEFAULT_FRAME ? [] : [frame(over, name)]),
    ];
    return ` OVER (${parts.join(' ')})`;
  }

  /** An `avg(...)` target, as its exact sum and count; undefined for any other target. */
  private average(value: unknown, level: Level): Written | undefined {
    const [type, node] = unwrap(value);
    if (type !== 'FuncCall' || node.over !== undefined) return undefined;
    const names = stringsOf(node.funcname);
    if (names.at(-1)?.toLowerCase() !== 'avg' || (names.length > 1 && names[0] !== 'pg_catalog')) return undefined;
    if (list(node.agg_order).length > 0 || node.agg_star === true) throw unsupported('avg with ORDER BY or *');
    const arg = single('avg', list(node.args).map((item) => this.expr(item, level)));
    const distinct = node.agg_distinct === true ? 'DISTINCT ' : '';
    const filter = node.agg_filter === undefined ? '' : ` FILTER (WHERE ${this.expr(node.agg_filter, level).sql})`;
    // the sum's scale is the arguments' (a numeric of a fixed scale), which PostgreSQL's division reads
    const sum = INTEGRAL.has(arg.type) ? `CAST(sum(${distinct}${arg.sql})${filter} AS HUGEINT)`
      : arg.type === 'decimal' ? `sum(${distinct}${arg.sql})${filter}` : undefined;
    if (sum === undefined) throw unsupported(`avg over ${arg.type === 'unknown' ? 'a value whose type the plan cannot tell' : `a ${arg.type} value`}`);
    return { sql: `struct_pack(a := ${sum}, b := count(${distinct}${arg.sql})${filter})`, type: 'decimal' };
  }

  /**
   * A numeric division (an operand numeric of a fixed scale, neither a double) as a target, as its exact
   * operands; undefined for any other target.
   */
  private quotient(value: unknown, level: Level): Written | undefined {
    const [type, node] = unwrap(value);
    if (type !== 'A_Expr' || node.kind !== 'AEXPR_OP' || node.lexpr === undefined || stringsOf(node.name).at(-1) !== '/') return undefined;
    const left = this.expr(node.lexpr, level);
    const right = this.expr(node.rexpr, level);
    const exact = (operand: Written) => INTEGRAL.has(operand.type) || operand.type === 'decimal';
    if (!exact(left) || !exact(right) || (INTEGRAL.has(left.type) && INTEGRAL.has(right.type))) return undefined;
    return { sql: `struct_pack(a := ${left.sql}, b := ${right.sql})`, type: 'decimal' };
  }

  /** A target that reads an inner level's division as it is (`g0.m0`): its operands, passed on. */
  private passedQuotient(value: unknown, level: Level): Written | undefined {
    const [type, node] = unwrap(value);
    if (type !== 'ColumnRef' || unwrap(list(node.fields).at(-1))[0] === 'A_Star') return undefined;
    const written = this.column(node, level, true);
    return written.type === 'quotient' ? written : undefined;
  }

  private cast(node: PgObject, level: Level): Written {
    const typeName = node.typeName as PgObject;
    if (list(typeName.arrayBounds).length > 0) throw unsupported('a cast to an array');
    const names = stringsOf(typeName.names);
    const target = (names.at(-1) ?? '').toLowerCase();
    const arg = this.expr(node.arg, level);
    // a bound value is text to convert, as PostgreSQL reads `$1::date` (node-postgres sends every value as text)
    const from = arg.type === 'unknown' && unwrap(node.arg)[0] === 'ParamRef' ? 'string' : arg.type;
    if (target === 'numeric') {
      const mods = list(typeName.typmods).map((mod) => Number((unwrap(mod)[1].ival as PgObject | undefined)?.ival ?? 0));
      const [precision, scale = 0] = mods;
      if (precision === undefined || precision > 38) throw unsupported('a cast to numeric without a precision of at most 38');
      if (!['integer', 'bigint', 'decimal', 'numeric', 'string'].includes(from)) throw unsupported(`a cast of ${arg.type} to numeric`);
      const value = from === 'string' ? checkedText(arg.sql, 'numeric') : arg.sql;
      return { sql: `CAST(${value} AS DECIMAL(${precision},${scale}))`, type: 'decimal' };
    }
    const known = CASTS[target];
    if (known === undefined || list(typeName.typmods).length > 0) throw unsupported(`a cast to ${names.join('.')}`);
    // a text read as an instant: PostgreSQL reads zone names and abbreviations the engine may not; an ISO constant is read alike
    if (known.type === 'timestamptz' && from === 'string' && !isoInstant(node.arg)) throw unsupported('a cast to timestamptz other than of an ISO 8601 constant');
    if (!known.from.includes(from)) throw unsupported(`a cast of ${arg.type === 'unknown' ? 'a value of unknown type' : arg.type} to ${target}`);
    if (from === 'string' && known.type === 'boolean') return { sql: textBoolean(arg.sql), type: 'boolean' };
    const value = from === 'string' && known.type in TEXT_FORMS ? checkedText(arg.sql, known.type as keyof typeof TEXT_FORMS) : arg.sql;
    return { sql: `CAST(${value} AS ${known.sql})`, type: known.type };
  }

  private subLink(node: PgObject, level: Level): Written {
    const [subType, sub] = unwrap(node.subselect);
    if (subType !== 'SelectStmt') throw unsupported(subType);
    const written = this.select(sub, level);
    switch (node.subLinkType) {
      case 'EXISTS_SUBLINK': return { sql: `(EXISTS (${written.sql}))`, type: 'boolean' };
      case 'EXPR_SUBLINK': return { sql: `(${written.sql})`, type: written.outputs[0]?.type ?? 'unknown' };
      case 'ANY_SUBLINK': {
        const operators = stringsOf(node.operName);
        if (operators.length > 0 && operators.at(-1) !== '=') throw unsupported(`${operators.at(-1)} ANY (subquery)`);
        const tested = this.expr(node.testexpr, level);
        // PostgreSQL compares a char(n) without its padding, which the subquery's rows would keep here
        if (tested.type === 'char' || written.outputs[0]?.type === 'char') throw unsupported('IN (subquery) of a char(n) value');
        return { sql: `(${tested.sql} IN (${written.sql}))`, type: 'boolean' };
      }
      default:
        throw unsupported(String(node.subLinkType));
    }
  }
}

/**
 * Operands compared (`=`, `<`, `IN`, `BETWEEN`, `IS DISTINCT FROM`) as PostgreSQL compares a char(n): without
 * its trailing spaces, and so a text constant or bound value compared with one (read as a char(n) there); a
 * text column compared with one keeps its own. Each operand's SQL.
 */
function compared(operands: readonly Written[], nodes: readonly unknown[]): string[] {
  if (!operands.some((operand) => operand.type === 'char')) return operands.map((operand) => operand.sql);
  return operands.map((operand, index) => {
    const [type, node] = unwrap(nodes[index]);
    const constant = (type === 'A_Const' && node.sval !== undefined) || type === 'ParamRef';
    return operand.type === 'char' || constant ? `rtrim(${operand.sql}, ' ')` : operand.sql;
  });
}

/** A value as text: a char(n) without its trailing spaces, as PostgreSQL converts one to text. */
function unpadded(value: Written): string {
  return value.type === 'char' ? `rtrim(${value.sql}, ' ')` : value.sql;
}

/** `value`, refused where it is a char(n) (whose padding `construct` would read otherwise than PostgreSQL). */
function notChar(value: Written, construct: string): Written {
  if (value.type === 'char') throw unsupported(`${construct} of a char(n) value`);
  return value;
}

/**
 * The texts a conversion reads alike in both, by the type converted to (RE2, as the engine matches). The engine
 * reads more (`'4.7'::int` is 5 there, `'0x10'` 16, an offset moves a timestamp) where PostgreSQL raises 22P02.
 */
const TEXT_FORMS = {
  integer: String.raw`\s*[+-]?[0-9]+\s*`,
  bigint: String.raw`\s*[+-]?[0-9]+\s*`,
  numeric: String.raw`\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*`,
  float: String.raw`\s*([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|(?i:nan|[+-]?inf(inity)?))\s*`,
  date: String.raw`\s*[0-9]{4}-[0-9]{2}-[0-9]{2}\s*`,
  timestamp: String.raw`\s*[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?)?\s*`,
} as const;

/** A text to convert to `type`: itself where both read it alike, else PostgreSQL's invalid-input error. */
function checkedText(sql: string, type: keyof typeof TEXT_FORMS): string {
  const name = { integer: 'integer', bigint: 'bigint', numeric: 'numeric', float: 'double precision', date: 'date', timestamp: 'timestamp' }[type];
  return `(CASE WHEN ${sql} IS NULL OR regexp_full_match(${sql}, '${TEXT_FORMS[type]}') THEN ${sql} ELSE error('invalid input syntax for type ${name}: "' || ${sql} || '"') END)`;
}

/** A text as PostgreSQL reads a boolean: a prefix of true, false, yes or no, on, off, 1 or 0, in any case, spaces around. */
function textBoolean(sql: string): string {
  const word = asciiFold(`trim(${sql})`, 'lower');
  const yes = ['t', 'tr', 'tru', 'true', 'y', 'ye', 'yes', 'on', '1'];
  const no = ['f', 'fa', 'fal', 'fals', 'false', 'n', 'no', 'of', 'off', '0'];
  return `(CASE WHEN ${sql} IS NULL THEN NULL WHEN ${word} IN (${yes.map(literal).join(', ')}) THEN TRUE WHEN ${word} IN (${no.map(literal).join(', ')}) THEN FALSE `
    + `ELSE error('invalid input syntax for type boolean: "' || ${sql} || '"') END)`;
}

/** Whether `node` is a text constant in ISO 8601's form, with a numeric offset or none (the session's UTC). */
function isoInstant(node: unknown): boolean {
  const [type, value] = unwrap(node);
  const text = type === 'A_Const' && value.sval !== undefined ? String((value.sval as PgObject).sval) : '';
  return /^\d{4}-\d\d-\d\d([ T]\d\d:\d\d(:\d\d(\.\d{1,6})?)?)?\s*([+-]\d\d(:?\d\d)?|Z)?$/i.test(text.trim());
}

function single(name: string, args: readonly Written[]): Written {
  if (args.length !== 1) throw unsupported(`${name} with ${args.length} arguments`);
  return args[0] as Written;
}

function renamedColumns(outputs: readonly Output[], renamed: readonly string[]): Map<string, EngineType> {
  return new Map(outputs.map((output, index) => [renamed[index] ?? output.name, output.type]));
}

function columnAliases(renamed: readonly string[]): string {
  return renamed.length === 0 ? '' : `(${renamed.map(engineIdentifier).join(', ')})`;
}

/** A constant as PostgreSQL types it: int4 when it fits, else int8, else numeric; text literals adapt to their context. */
function constant(node: PgObject): Written {
  if (node.isnull === true) return { sql: 'NULL', type: 'unknown' };
  if (node.ival !== undefined) return { sql: String(Number((node.ival as PgObject).ival ?? 0)), type: 'integer' };
  if (node.fval !== undefined) {
    const text = String((node.fval as PgObject).fval);
    // the parser folds a minus into the constant: `-0.01`, `-3000000000`
    if (!/^-?[0-9]*\.?[0-9]*(e[+-]?[0-9]+)?$/i.test(text)) throw unsupported(`the number ${text}`);
    if (/^-?[0-9]+$/.test(text)) {
      if (BigInt(text) <= 9223372036854775807n && BigInt(text) >= -9223372036854775808n) return { sql: `CAST(${text} AS BIGINT)`, type: 'bigint' };
      if (text.replace('-', '').length > 38) throw unsupported(`the number ${text}`);
      return { sql: `CAST(${text} AS DECIMAL(38,0))`, type: 'decimal' };
    }
    if (/e/i.test(text)) throw unsupported(`the number ${text} in exponent notation`);
    const [whole = '', fraction = ''] = text.replace(/^-/, '').split('.');
    const digits = whole.replace(/^0+/, '').length + fraction.length;
    if (digits > 38) throw unsupported(`the number ${text}`);
    return { sql: `CAST(${literal(text)} AS DECIMAL(${Math.max(digits, 1)},${fraction.length}))`, type: 'decimal' };
  }
  if (node.sval !== undefined) return { sql: literal(String((node.sval as PgObject).sval ?? '')), type: 'string' };
  if (node.boolval !== undefined) return { sql: (node.boolval as PgObject).boolval === true ? 'TRUE' : 'FALSE', type: 'boolean' };
  throw unsupported('a bit-string constant');
}

/** An interval constant's units, as PostgreSQL reads them, in months, days or microseconds. */
const INTERVAL_UNITS: Readonly<Record<string, { part: 'months' | 'days' | 'micros'; times: bigint }>> = {
  year: { part: 'months', times: 12n }, month: { part: 'months', times: 1n }, mon: { part: 'months', times: 1n },
  week: { part: 'days', times: 7n }, day: { part: 'days', times: 1n },
  hour: { part: 'micros', times: 3_600_000_000n }, minute: { part: 'micros', times: 60_000_000n }, min: { part: 'micros', times: 60_000_000n },
  second: { part: 'micros', times: 1_000_000n }, sec: { part: 'micros', times: 1_000_000n },
};

/**
 * `interval '<n> <unit> …'` (whole numbers of years, months, weeks, days, hours, minutes, seconds), written as
 * the engine's interval of the same months, days and microseconds; undefined when the node is no cast to
 * interval. Any other interval (a parameter, fractions, `hh:mm:ss`, `ago`) is refused.
 */
function intervalConstant(node: unknown): string | undefined {
  const [type, cast] = unwrap(node);
  if (type !== 'TypeCast' || stringsOf((cast.typeName as PgObject).names).at(-1)?.toLowerCase() !== 'interval') return undefined;
  const [argType, arg] = unwrap(cast.arg);
  const text = argType === 'A_Const' && arg.sval !== undefined ? String((arg.sval as PgObject).sval).trim().toLowerCase() : undefined;
  const refused = () => unsupported('an interval other than a constant of whole years, months, weeks, days, hours, minutes and seconds');
  if (text === undefined || text === '' || list((cast.typeName as PgObject).typmods).length > 0) throw refused();
  const parts = { months: 0n, days: 0n, micros: 0n };
  const term = /\s*([+-]?\d{1,6})\s*([a-z]+?)s?(?=\s|$)/y;
  for (let at = 0; at < text.length;) {
    term.lastIndex = at;
    const match = term.exec(text);
    const unit = match ? INTERVAL_UNITS[match[2] as string] : undefined;
    if (!match || !unit) throw refused();
    parts[unit.part] += BigInt(match[1] as string) * unit.times;
    at = term.lastIndex;
    while (text[at] === ' ') at += 1;
  }
  return `(to_months(${parts.months}) + to_days(${parts.days}) + to_microseconds(${parts.micros}))`;
}

/** The IANA time zone names both read alike (Node's ICU knows the same database as the engine's). */
const ZONES = new Set(['UTC', ...Intl.supportedValuesOf('timeZone')]);

/**
 * `lag`/`lead` (value, a constant offset, a default of the value's type) and `first_value`/`last_value` over
 * the window's frame: the same rows of the partition in both, and the value as it is.
 */
function offsetFunction(name: string, args: readonly Written[], over: string | undefined, filter: string): Written {
  if (over === undefined || filter !== '') throw unsupported(`${name} without OVER or with FILTER`);
  const [value, offset, fallback] = args;
  const shifted = name === 'lag' || name === 'lead';
  if (value === undefined || args.length > (shifted ? 3 : 1) || (offset !== undefined && !INTEGRAL.has(offset.type))) {
    throw unsupported(`${name} other than of a value${shifted ? ', an integer offset and a default' : ''}`);
  }
  // PostgreSQL requires the default to be of the value's type; the engine would convert either
  if (fallback !== undefined && fallback.type !== value.type && fallback.type !== 'unknown') throw unsupported(`${name} with a default of another type`);
  return { sql: `${name}(${args.map((arg) => arg.sql).join(', ')})${over}`, type: value.type };
}

/** PostgreSQL's frame option bits (parsenodes.h). */
const FRAME = {
  range: 0x2, rows: 0x4, startUnboundedPreceding: 0x20, endUnboundedFollowing: 0x100, startCurrentRow: 0x200, endCurrentRow: 0x400,
  startOffsetPreceding: 0x800, endOffsetPreceding: 0x1000, startOffsetFollowing: 0x2000, endOffsetFollowing: 0x4000,
} as const;
/** The bits the frames below are written from: any other (GROUPS, EXCLUDE) is refused. */
const FRAME_KNOWN = 0x1 | 0x10 | Object.values(FRAME).reduce((all, bit) => all | bit, 0);

/**
 * An explicit frame, as the engine writes the same one: `ROWS` between unbounded, current-row or constant
 * offset bounds (rows counted alike in both), `RANGE` between unbounded and current-row bounds (peers alike).
 * A `RANGE` offset (its arithmetic on the ordering's type), `GROUPS` and `EXCLUDE` are refused.
 */
function frame(over: PgObject, name: string): string {
  const options = Number(over.frameOptions);
  const has = (bit: number) => (options & bit) !== 0;
  if ((options & ~FRAME_KNOWN) !== 0 || (!has(FRAME.rows) && !has(FRAME.range))) throw unsupported(`a GROUPS or EXCLUDE window frame for ${name}`);
  const offset = (value: unknown, which: string): string => {
    if (has(FRAME.range)) throw unsupported(`a RANGE window frame with an offset for ${name}`);
    const [type, node] = unwrap(value);
    const count = type === 'A_Const' && node.ival !== undefined ? Number((node.ival as PgObject).ival ?? 0) : undefined;
    // PostgreSQL refuses a negative offset; only a constant is written, so both count the same rows
    if (count === undefined || count < 0) throw unsupported(`a window frame ${which} offset other than a constant of zero or more`);
    return String(count);
  };
  const start = has(FRAME.startUnboundedPreceding) ? 'UNBOUNDED PRECEDING'
    : has(FRAME.startCurrentRow) ? 'CURRENT ROW'
      : `${offset(over.startOffset, 'start')} ${has(FRAME.startOffsetPreceding) ? 'PRECEDING' : 'FOLLOWING'}`;
  const end = has(FRAME.endUnboundedFollowing) ? 'UNBOUNDED FOLLOWING'
    : has(FRAME.endCurrentRow) ? 'CURRENT ROW'
      : `${offset(over.endOffset, 'end')} ${has(FRAME.endOffsetPreceding) ? 'PRECEDING' : 'FOLLOWING'}`;
  return `${has(FRAME.rows) ? 'ROWS' : 'RANGE'} BETWEEN ${start} AND ${end}`;
}

/** Lowers or uppers ASCII letters only, as PostgreSQL's lower/upper under collation "C". */
function asciiFold(sql: string, to: 'lower' | 'upper'): string {
  const [from, into] = to === 'lower' ? [ASCII_UPPER, ASCII_UPPER.toLowerCase()] : [ASCII_UPPER.toLowerCase(), ASCII_UPPER];
  return `translate(${sql}, '${from}', '${into}')`;
}

/**
 * The arguments of a text function, `count` of them, each text (or a constant or parameter PostgreSQL reads as
 * text, or a char(n), which it converts to text without its padding).
 */
function textArguments(name: string, args: readonly Written[], count: number): string[] {
  if (args.length !== count || args.some((arg) => !['string', 'unknown', 'char'].includes(arg.type))) throw unsupported(`${name} other than of ${count === 1 ? 'a text' : `${count} texts`}`);
  return args.map(unpadded);
}

/**
 * PostgreSQL's substring(text, start[, count]) over characters: the characters from `start` to `start + count - 1`
 * that exist (a start before 1 takes fewer), a negative count an error. The engine's reads a start below 1 from
 * the end, so the start is clamped to 1 and the count shortened by as much.
 */
function substring(name: string, args: readonly Written[]): Written {
  const [text, start, count] = args;
  if (text === undefined || start === undefined || args.length > 3 || !INTEGRAL.has(start.type) || (count !== undefined && !INTEGRAL.has(count.type))) {
    throw unsupported(`${name} other than of a text from an integer position (a pattern's is not)`);
  }
  const [source] = textArguments(name, [text], 1);
  const from = `(CASE WHEN ${start.sql} < 1 THEN 1 ELSE ${start.sql} END)`;
  if (count === undefined) return { sql: `substring(${source}, ${from})`, type: 'string' };
  const length = `(CASE WHEN ${count.sql} < 0 THEN error('negative substring length not allowed') WHEN ${start.sql} + ${count.sql} - ${from} < 0 THEN 0 ELSE ${start.sql} + ${count.sql} - ${from} END)`;
  return { sql: `substring(${source}, ${from}, ${length})`, type: 'string' };
}

/** `+ - * / % ||` with PostgreSQL's result types; division only where its meaning is the same in the engine. */
function arithmetic(op: string, left: Written, right: Written): Written {
  if (op === '||') {
    // a non-text operand is its text: a double's (`1000000` there, `1000000.0` here) and an unconstrained numeric's differ
    const other = [left.type, right.type].find((type) => !CONCATENATED_TYPES.has(type) && type !== 'char');
    if (other !== undefined) throw unsupported(`|| with a ${other === 'numeric' ? 'numeric without a scale' : other} operand`);
    return { sql: `(${unpadded(left)} || ${unpadded(right)})`, type: 'string' };
  }
  if (!['+', '-', '*', '/', '%'].includes(op)) throw unsupported(`operator ${op}`);
  const types = [left.type, right.type];
  if (op === '/' || op === '%') {
    const integral = types.every((type) => INTEGRAL.has(type));
    // a double with any number is a double's division in both (PostgreSQL converts the other to float8)
    const floating = op === '/' && types.includes('float') && types.every((type) => NUMERIC.has(type));
    if (!integral && !floating) {
      throw unsupported(op === '/' ? 'a numeric division other than an output column of the outermost SELECT' : 'modulo unless both operands are integers');
    }
    // PostgreSQL raises division_by_zero where the engine would answer NULL
    const divisor = `(CASE WHEN ${right.sql} = 0 THEN error('division by zero') ELSE ${right.sql} END)`;
    return { sql: `(${left.sql} ${op} ${divisor})`, type: floating ? 'float' : widest(types) };
  }
  if (types.every((type) => NUMERIC.has(type))) return { sql: `(${left.sql} ${op} ${right.sql})`, type: widest(types) };
  if (op !== '*' && left.type === 'date' && INTEGRAL.has(right.type)) return { sql: `(${left.sql} ${op} ${right.sql})`, type: 'date' };
  // the days between two dates: integer in PostgreSQL, bigint in the engine
  if (op === '-' && left.type === 'date' && right.type === 'date') return { sql: `CAST((${left.sql} - ${right.sql}) AS INTEGER)`, type: 'integer' };
  throw unsupported(`operator ${op} on ${left.type === 'unknown' || right.type === 'unknown' ? 'values of unknown type' : `${left.type} and ${right.type}`}`);
}

/** The type of a numeric expression over these types, as PostgreSQL resolves it. */
function widest(types: readonly EngineType[]): EngineType {
  const known = types.filter((type) => type !== 'unknown');
  if (known.length === 0) return 'unknown';
  // PostgreSQL resolves a char(n) with another text to text, without its padding
  if (known.includes('char') && known.some((type) => type !== 'char')) throw unsupported('a char(n) value where a value of another type is expected too');
  for (const type of ['float', 'numeric', 'decimal', 'bigint', 'integer'] as const) if (known.includes(type)) return type;
  return known[0] as EngineType;
}

/** The name PostgreSQL gives an output column without an alias (FigureColname). */
export function outputName(value: unknown): string {
  return figure(value) ?? '?column?';
}

function figure(value: unknown): string | undefined {
  const [type, node] = unwrap(value);
  switch (type) {
    case 'ColumnRef': {
      const last = list(node.fields).at(-1);
      return last !== undefined && unwrap(last)[0] === 'String' ? String(unwrap(last)[1].sval) : undefined;
    }
    case 'FuncCall': return stringsOf(node.funcname).at(-1);
    case 'TypeCast': return figure(node.arg) ?? stringsOf((node.typeName as PgObject).names).at(-1);
    case 'CaseExpr': return 'case';
    case 'CoalesceExpr': return 'coalesce';
    case 'MinMaxExpr': return node.op === 'IS_GREATEST' ? 'greatest' : 'least';
    case 'A_Expr': return node.kind === 'AEXPR_NULLIF' ? 'nullif' : undefined;
    case 'SubLink': {
      if (node.subLinkType === 'EXISTS_SUBLINK') return 'exists';
      if (node.subLinkType !== 'EXPR_SUBLINK') return undefined;
      const [, sub] = unwrap(node.subselect);
      const first = list(sub.targetList)[0];
      if (first === undefined) return undefined;
      const [, target] = unwrap(first);
      return target.name === undefined ? figure(target.val) : String(target.name);
    }
    default: return undefined;
  }
}
