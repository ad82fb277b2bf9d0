/**
 * Statement facts from libpg-query, the real PostgreSQL grammar (PostgreSQL, PGlite).
 * Its AST is loosely typed JSON: nodes are `{ TypeName: { ...fields } }`, some fields hold a node's fields
 * without the wrapper. The walk visits every object, so a column or relation in a place not handled below
 * is still recorded (as a read of the current query level) rather than missed.
 */
import { parseSync } from 'libpg-query';
import { deny, type Denial } from '../plugin-api/denial.js';
import {
  ALL_COLUMNS, newScope,
  type FunctionUse, type Scope, type Source, type StatementFacts, type StatementKind,
} from '../plugin-api/statement-facts.js';
import { messageOf } from '../plugin-api/errors.js';
import type { PlaceholderStyle } from '../plugin-api/sql-syntax.js';
import { parserLimitDenial, walkWithinLimits } from './parser-limits.js';
import { withServerPlaceholders } from './server-placeholders.js';

type PgObject = { [field: string]: unknown };
/** Names of the CTEs visible at a point of the statement. */
type CteNames = ReadonlySet<string>;

const NO_CTES: CteNames = new Set();

/** The facts of one statement; the WASM module must be loaded. */
export function libpgQueryStatementFacts(sql: string, placeholders: PlaceholderStyle): StatementFacts | Denial {
  const text = withServerPlaceholders(sql, placeholders);
  if (typeof text !== 'string') return text;
  let statements: unknown[];
  try {
    statements = parseSync(text).stmts ?? [];
  } catch (error) {
    return parserLimitDenial(error) ?? deny('unparseable', `the statement cannot be parsed: ${messageOf(error)}`);
  }
  if (statements.length === 0) return deny('unparseable', 'the text holds no statement');
  if (statements.length > 1) return deny('multiple_statements', `the text holds ${statements.length} statements; send exactly one`);
  const statement = (statements[0] as PgObject).stmt;
  return walkWithinLimits(() => new PostgresFactsBuilder().facts(statement));
}

const TOP_LEVEL: Readonly<Record<string, { kind: StatementKind; label: string }>> = {
  SelectStmt: { kind: 'select', label: 'SELECT' },
  InsertStmt: { kind: 'insert', label: 'INSERT' },
  UpdateStmt: { kind: 'update', label: 'UPDATE' },
  DeleteStmt: { kind: 'delete', label: 'DELETE' },
};

class PostgresFactsBuilder {
  private readonly functions: FunctionUse[] = [];
  private writes: string | undefined;
  private unsupported: string | undefined;

  facts(statement: unknown): StatementFacts {
    const [type, node] = unwrap(statement);
    // EXPLAIN is authorized as the statement it explains: EXPLAIN ANALYZE runs it.
    if (type === 'ExplainStmt') return this.facts(node.query);
    const root = newScope();
    const known = TOP_LEVEL[type];
    if (!known) {
      const label = statementLabel(type);
      return { kind: 'other', label, unsupported: `${label} statements cannot run here: only SELECT, INSERT, UPDATE and DELETE`, root, functions: [] };
    }
    this.statement(type, node, root, NO_CTES);
    const facts: StatementFacts = { kind: known.kind, label: known.label, root, functions: this.functions };
    if (this.writes !== undefined) facts.writes = this.writes;
    if (this.unsupported !== undefined) facts.unsupported = this.unsupported;
    return facts;
  }

  /** A SELECT, INSERT, UPDATE or DELETE at any depth; anything else nested (MERGE in WITH) is refused. */
  private statement(type: string, node: PgObject, parent: Scope, ctes: CteNames): void {
    switch (type) {
      case 'SelectStmt': return this.select(node, parent, ctes);
      case 'InsertStmt': return this.insert(node, parent, ctes);
      case 'UpdateStmt': return this.update(node, parent, ctes);
      case 'DeleteStmt': return this.delete(node, parent, ctes);
      default:
        this.unsupported ??= `${statementLabel(type)} cannot run here: only SELECT, INSERT, UPDATE and DELETE`;
        this.writes ??= `${statementLabel(type)} changes data`;
    }
  }

  private select(node: PgObject, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.withClause, parent, outerCtes);
    const skipped = ['withClause', 'fromClause', 'intoClause', 'lockingClause', 'larg', 'rarg'];
    if (node.intoClause !== undefined) {
      this.writes ??= 'SELECT INTO creates a table';
      this.unsupported ??= 'SELECT INTO creates a table outside the VDB';
    }
    if (node.lockingClause !== undefined) this.writes ??= 'SELECT … FOR UPDATE/SHARE locks rows';
    if (node.op !== undefined && node.op !== 'SETOP_NONE') {
      this.select(node.larg as PgObject, parent, ctes);
      this.select(node.rarg as PgObject, parent, ctes);
      // ORDER BY and LIMIT of a UNION name its output columns: a level of their own, with no sources.
      this.visitFields(node, newScope(parent), ctes, skipped);
      return;
    }
    const scope = newScope(parent);
    for (const item of list(node.fromClause)) this.fromItem(item, scope, ctes);
    if (node.lockingClause !== undefined) {
      // PostgreSQL asks UPDATE privilege for FOR UPDATE/SHARE: a lock held on rows blocks their writers.
      for (const source of scope.sources) if (source.relation) source.writes.push({ action: 'update', columns: [] });
    }
    this.visitFields(node, scope, ctes, [...skipped, 'sortClause']);
    this.orderBy(node, scope, ctes);
  }

  /**
   * In ORDER BY, a bare name that is an output column's name means that output column (PostgreSQL looks
   * there first): its expression was read with the select list, so it reads no column of its own.
   */
  private orderBy(node: PgObject, scope: Scope, ctes: CteNames): void {
    const outputNames = new Set(list(node.targetList).map((target) => optionalString(unwrap(target)[1].name)).filter((name) => name !== undefined));
    for (const item of list(node.sortClause)) {
      const [type, reference] = unwrap(unwrap(item)[1].node);
      const fields = type === 'ColumnRef' ? list(reference.fields) : [];
      if (fields.length === 1 && outputNames.has(stringOf(fields[0]))) continue;
      this.visit(item, scope, ctes);
    }
  }

  private insert(node: PgObject, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.withClause, parent, outerCtes);
    const scope = newScope(parent);
    const target = this.dmlTarget(node.relation, scope);
    const columns = list(node.cols).map(assignedColumn);
    target.writes.push({ action: 'insert', columns: columns.length > 0 ? columns : 'all' });
    const conflict = node.onConflictClause;
    if (isObject(conflict) && conflict.action === 'ONCONFLICT_UPDATE') {
      target.writes.push({ action: 'update', columns: list(conflict.targetList).map(assignedColumn) });
      // `excluded` is the row being inserted: the caller's own values, not data of the table.
      scope.sources.push({ exposedName: 'excluded', read: false, writes: [] });
    }
    this.visitFields(node, scope, ctes, ['withClause', 'relation', 'cols']);
  }

  private update(node: PgObject, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.withClause, parent, outerCtes);
    const scope = newScope(parent);
    const target = this.dmlTarget(node.relation, scope);
    target.writes.push({ action: 'update', columns: list(node.targetList).map(assignedColumn) });
    for (const item of list(node.fromClause)) this.fromItem(item, scope, ctes);
    this.visitFields(node, scope, ctes, ['withClause', 'relation', 'fromClause']);
  }

  private delete(node: PgObject, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.withClause, parent, outerCtes);
    const scope = newScope(parent);
    this.dmlTarget(node.relation, scope).writes.push({ action: 'delete', columns: [] });
    for (const item of list(node.usingClause)) this.fromItem(item, scope, ctes);
    this.visitFields(node, scope, ctes, ['withClause', 'relation', 'usingClause']);
  }

  /** A DML target names a table, never a CTE: PostgreSQL resolves it through the search path. */
  private dmlTarget(relation: unknown, scope: Scope): Source {
    return this.relation(isObject(relation) ? relation : {}, scope, NO_CTES, false);
  }

  /**
   * Registers the CTEs of a WITH clause, walks their bodies, and returns the names visible after it. A CTE
   * sees the CTEs before it (all of them with RECURSIVE); a name it cannot see is resolved as a table.
   */
  private withClause(clause: unknown, scope: Scope, outer: CteNames): CteNames {
    if (!isObject(clause)) return outer;
    const ctes = list(clause.ctes).map((cte) => unwrap(cte)[1]);
    const names = ctes.map((cte) => String(cte.ctename));
    const all = new Set([...outer, ...names]);
    ctes.forEach((cte, position) => {
      const visible = clause.recursive === true ? all : new Set([...outer, ...names.slice(0, position)]);
      this.visit(cte.ctequery, scope, visible);
    });
    return all;
  }

  private fromItem(item: unknown, scope: Scope, ctes: CteNames): void {
    const [type, node] = unwrap(item);
    switch (type) {
      case 'RangeVar':
        this.relation(node, scope, ctes, true);
        return;
      case 'JoinExpr':
        this.join(node, scope, ctes);
        return;
      case 'RangeTableSample':
        this.fromItem(node.relation, scope, ctes);
        this.visit(node.args, scope, ctes);
        return;
      default:
        // A subquery, a function, VALUES, XMLTABLE, JSON_TABLE: a derived table whose reads are its own.
        this.visit(node, scope, ctes);
        scope.sources.push({ exposedName: aliasOf(node), read: false, writes: [] });
    }
  }

  private join(node: PgObject, scope: Scope, ctes: CteNames): void {
    const first = scope.sources.length;
    this.fromItem(node.larg, scope, ctes);
    this.fromItem(node.rarg, scope, ctes);
    for (const name of list(node.usingClause)) scope.columns.push({ qualifier: [], column: stringOf(name) });
    if (node.isNatural === true) {
      // NATURAL JOIN compares every column the two sides share: count them all as read.
      for (const source of scope.sources.slice(first)) {
        if (source.relation && source.exposedName !== undefined) scope.columns.push({ qualifier: [source.exposedName], column: ALL_COLUMNS });
      }
    }
    this.visit(node.quals, scope, ctes);
  }

  private relation(node: PgObject, scope: Scope, ctes: CteNames, read: boolean): Source {
    const name = String(node.relname);
    const schema = optionalString(node.schemaname);
    const database = optionalString(node.catalogname);
    const exposedName = aliasOf(node) ?? name;
    if (schema === undefined && database === undefined && ctes.has(name)) {
      const cte: Source = { exposedName, read: false, writes: [] };
      scope.sources.push(cte);
      return cte;
    }
    const source: Source = { exposedName, relation: { name, ...(schema === undefined ? {} : { schema }), ...(database === undefined ? {} : { database }) }, read, writes: [] };
    const columnAliases = isObject(node.alias) ? list(node.alias.colnames).map(stringOf) : [];
    if (columnAliases.length > 0) source.columnAliases = columnAliases;
    scope.sources.push(source);
    return source;
  }

  /** Visits every value, giving the nodes that matter to their handler. */
  private visit(value: unknown, scope: Scope, ctes: CteNames): void {
    if (Array.isArray(value)) {
      for (const item of value) this.visit(item, scope, ctes);
      return;
    }
    if (!isObject(value)) return;
    // A relation's fields without their wrapper, somewhere not handled above: record it as read.
    if ('relname' in value) {
      this.relation(value, scope, ctes, true);
      return;
    }
    for (const [type, child] of Object.entries(value)) {
      if (isObject(child) && this.node(type, child, scope, ctes)) continue;
      this.visit(child, scope, ctes);
    }
  }

  /** Handles one wrapped node; false when the generic walk should go on into it. */
  private node(type: string, node: PgObject, scope: Scope, ctes: CteNames): boolean {
    switch (type) {
      case 'SelectStmt':
        this.select(node, scope, ctes);
        return true;
      case 'InsertStmt':
      case 'UpdateStmt':
      case 'DeleteStmt':
      case 'MergeStmt':
        this.writes ??= `a data-modifying ${statementLabel(type)} in WITH changes data`;
        this.statement(type, node, scope, ctes);
        return true;
      case 'RangeVar':
        this.relation(node, scope, ctes, true);
        return true;
      case 'JoinExpr':
        this.join(node, scope, ctes);
        return true;
      case 'ColumnRef': {
        const parts = list(node.fields).map((field) => (isObject(field) && 'A_Star' in field ? ALL_COLUMNS : stringOf(field)));
        scope.columns.push({ qualifier: parts.slice(0, -1), column: parts[parts.length - 1] ?? ALL_COLUMNS });
        return true;
      }
      case 'FuncCall':
        this.functions.push(functionUse(list(node.funcname).map(stringOf)));
        this.visitFields(node, scope, ctes, ['funcname']);
        return true;
      case 'A_Expr': {
        // OPERATOR(schema.op) calls the operator's function: a schema outside the VDB must be refused.
        const name = list(node.name).map(stringOf);
        if (name.length > 1) this.functions.push({ ...functionUse(name), form: 'operator' });
        this.visitFields(node, scope, ctes, ['name']);
        return true;
      }
      default:
        return false;
    }
  }

  private visitFields(node: PgObject, scope: Scope, ctes: CteNames, skip: readonly string[]): void {
    for (const [field, value] of Object.entries(node)) if (!skip.includes(field)) this.visit(value, scope, ctes);
  }
}

function functionUse(parts: string[]): FunctionUse {
  const [name = '', schema, database] = [...parts].reverse();
  return { name, ...(schema === undefined ? {} : { schema }), ...(database === undefined ? {} : { database }) };
}

/** `{ RangeVar: {...} }` → `['RangeVar', {...}]`. */
function unwrap(value: unknown): [string, PgObject] {
  if (!isObject(value)) return ['', {}];
  const [entry] = Object.entries(value);
  return entry && isObject(entry[1]) ? [entry[0], entry[1]] : ['', value];
}

/** The column an INSERT column list or UPDATE SET item assigns (a ResTarget's name). */
function assignedColumn(target: unknown): string {
  return String(unwrap(target)[1].name);
}

function aliasOf(node: PgObject): string | undefined {
  return isObject(node.alias) ? optionalString(node.alias.aliasname) : undefined;
}

function stringOf(value: unknown): string {
  const [, node] = unwrap(value);
  return String(node.sval ?? '');
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isObject(value: unknown): value is PgObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `VariableSetStmt` → `SET`, `CreateTableAsStmt` → `CREATE TABLE AS`: how people call the statement. */
function statementLabel(type: string): string {
  const special: Record<string, string> = { VariableSetStmt: 'SET', VariableShowStmt: 'SHOW', CreateStmt: 'CREATE TABLE' };
  return special[type] ?? type.replace(/Stmt$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();
}
