/**
 * Statement facts from a node-sql-parser grammar (MySQL, SQL Server, Oracle). Its grammars are close to, not
 * the same as, the servers' (docs/authorization.md lists the gaps), so this side fails closed: text the
 * grammar reads differently is refused first (node-sql-parser-grammar.ts), a statement the grammar cannot
 * parse is refused, an AST shape the walk does not know is refused, and every table the parser itself lists
 * must have been seen by the walk.
 */
import { deny, type Denial } from '../plugin-api/denial.js';
import {
  ALL_COLUMNS, newScope,
  type ColumnUse, type FunctionUse, type RelationName, type Scope, type Source, type StatementFacts, type StatementKind,
} from '../plugin-api/statement-facts.js';
import { messageOf } from '../plugin-api/errors.js';
import type { DialectSyntax } from '../plugin-api/sql-syntax.js';
import { parserLimitDenial, walkWithinLimits } from './parser-limits.js';

type SqlNode = { [field: string]: unknown };
type CteNames = ReadonlySet<string>;

interface TableColumnAst {
  tableList: string[];
  ast: unknown;
}

/** A loaded node-sql-parser `Parser`, for one of its grammars. */
export interface NodeSqlParser {
  /** The AST with the tables the parser saw, which the walk must all have met. */
  parse(sql: string, options: { database: string }): TableColumnAst;
  /** The AST alone, for expressions. */
  astify(sql: string, options: { database: string }): unknown;
}

/** The facts of one statement, its text already checked for hazards and given the server's placeholders. */
export function nodeSqlParserStatementFacts(text: string, parser: NodeSqlParser, database: string, syntax: DialectSyntax): StatementFacts | Denial {
  let parsed: TableColumnAst;
  try {
    parsed = parser.parse(text, { database });
  } catch (error) {
    return parserLimitDenial(error) ?? deny('unparseable', `the statement cannot be parsed: ${syntaxError(messageOf(error))}`);
  }
  const statements = (Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast]).filter(isObject);
  if (statements.length === 0) return deny('unparseable', 'the text holds no statement');
  if (statements.length > 1) return deny('multiple_statements', `the text holds ${statements.length} statements; send exactly one`);
  return walkWithinLimits(() => statementFacts(statements[0] as SqlNode, parsed.tableList, new GenericFactsBuilder(syntax)));
}

function statementFacts(statement: SqlNode, tableList: readonly string[], builder: GenericFactsBuilder): StatementFacts | Denial {
  try {
    const facts = builder.facts(statement);
    // Other statement kinds are refused whole; their tables need no accounting.
    const missed = facts.kind === 'other' ? undefined : builder.unseenTables(tableList);
    if (missed) return deny('unparseable', `the statement has a shape the authorizer cannot follow (around ${missed})`);
    return facts;
  } catch (error) {
    if (error instanceof UnfollowableShape) return deny('unparseable', error.message);
    throw error;
  }
}

/** The parser's message without its list of every token it expected. */
function syntaxError(message: string): string {
  const found = /but (.+) found\.?$/.exec(message);
  return found ? `syntax error at ${found[1]}` : message.split('\n')[0] ?? message;
}

/** The AST has a shape the walk does not know: refused rather than guessed at. */
class UnfollowableShape extends Error {}

function unfollowable(what: string): never {
  throw new UnfollowableShape(`${what} cannot be authorized`);
}

const TOP_LEVEL: Readonly<Record<string, StatementKind>> = { select: 'select', insert: 'insert', update: 'update', delete: 'delete' };

/**
 * Syntax the grammars write as a call of a keyword: `EXISTS (subquery)`, `x > ANY (subquery)`, `ROW(1, 2)`.
 * These words are reserved, so unquoted they never name a function.
 */
const SYNTAX_CALLS = new Set(['exists', 'any', 'all', 'some', 'unique', 'row']);

/** T-SQL table hints that take locks a plain read would not. */
const LOCKING_HINTS = new Set(['updlock', 'xlock', 'tablock', 'tablockx', 'holdlock', 'paglock', 'rowlock', 'serializable', 'repeatableread']);

class GenericFactsBuilder {
  private readonly functions: FunctionUse[] = [];
  /** Every table name the walk met, as `schema::name` the way the parser's tableList spells it. */
  private readonly seen = new Set<string>();
  private writes: string | undefined;
  private unsupported: string | undefined;

  constructor(private readonly syntax: DialectSyntax) {}

  facts(statement: SqlNode): StatementFacts {
    const type = String(statement.type);
    const label = type.toUpperCase();
    const root = newScope();
    const kind = TOP_LEVEL[type];
    if (!kind) return { kind: 'other', label, unsupported: `${label} statements cannot run here: only SELECT, INSERT, UPDATE and DELETE`, root, functions: [] };
    this.statement(statement, root, new Set());
    const facts: StatementFacts = { kind, label, root, functions: this.functions };
    if (this.writes !== undefined) facts.writes = this.writes;
    if (this.unsupported !== undefined) facts.unsupported = this.unsupported;
    return facts;
  }

  /** The first table of the parser's own list the walk did not meet, if any. */
  unseenTables(tableList: readonly string[]): string | undefined {
    for (const entry of tableList) {
      const [, database = 'null', table = ''] = entry.split('::');
      const key = `${database === 'null' ? '' : this.fold(database)}::${this.fold(table)}`;
      if (!this.seen.has(key)) return database === 'null' ? table : `${database}.${table}`;
    }
    return undefined;
  }

  private statement(node: SqlNode, parent: Scope, ctes: CteNames): void {
    switch (node.type) {
      case 'select': return this.select(node, parent, ctes);
      case 'insert': return this.insert(node, parent, ctes);
      case 'update': return this.update(node, parent, ctes);
      case 'delete': return this.delete(node, parent, ctes);
      default:
        this.unsupported ??= `${String(node.type).toUpperCase()} cannot run here: only SELECT, INSERT, UPDATE and DELETE`;
        this.writes ??= `${String(node.type).toUpperCase()} changes data`;
    }
  }

  private select(node: SqlNode, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.with, parent, outerCtes);
    const scope = newScope(parent);
    for (const item of list(node.from)) this.fromItem(item, scope, ctes);
    if (isObject(node.into) && (node.into.position != null || node.into.expr != null)) {
      this.writes ??= 'SELECT INTO writes a table or a file';
      this.unsupported ??= 'SELECT INTO writes a table or a file outside the VDB';
    }
    if (node.locking_read != null) this.lockRows(scope, 'SELECT … FOR UPDATE/SHARE locks rows');
    this.visitFields(node, scope, ctes, ['with', 'from', 'into', '_next']);
    // The next branch of a UNION, INTERSECT or EXCEPT: a query level of its own.
    if (isObject(node._next)) this.select(node._next, parent, ctes);
  }

  private insert(node: SqlNode, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.with, parent, outerCtes);
    const scope = newScope(parent);
    const tables = list(node.table);
    if (tables.length !== 1 || !isObject(tables[0])) unfollowable('an INSERT into several tables');
    const target = this.relationSource(tables[0], scope, new Set(), false);
    const columns = list(node.columns).map((column) => this.columnName(column));
    target.writes.push({ action: 'insert', columns: columns.length > 0 ? columns : 'all' });
    const duplicate = node.on_duplicate_update;
    if (isObject(duplicate)) {
      target.writes.push({ action: 'update', columns: list(duplicate.set).map((item) => this.columnName(isObject(item) ? item.column : item)) });
      for (const item of list(duplicate.set)) if (isObject(item)) this.visit(item.value, scope, ctes);
    }
    this.visitFields(node, scope, ctes, ['with', 'table', 'columns', 'on_duplicate_update']);
  }

  /**
   * MySQL lists the target and joined tables under `table`; T-SQL names the target under `table` (maybe by
   * the alias of a FROM item) and its sources under `from`. SET items name their target by qualifier.
   */
  private update(node: SqlNode, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.with, parent, outerCtes);
    const scope = newScope(parent);
    for (const item of list(node.from)) this.fromItem(item, scope, ctes);
    const targets = list(node.table).map((item, position) => {
      const aliased = this.aliasedSource(item, scope);
      if (aliased) return aliased;
      const source = this.fromItem(item, scope, ctes);
      // The first table is the one updated; reading it is asked for by the columns the statement reads.
      if (source && position === 0) source.read = false;
      return source;
    });
    for (const item of list(node.set)) {
      if (!isObject(item)) continue;
      const qualifier = typeof item.table === 'string' ? this.fold(item.table) : undefined;
      const target = qualifier === undefined
        ? (targets.length === 1 ? targets[0] : undefined)
        : scope.sources.find((source) => source.exposedName === qualifier);
      if (!target?.relation) unfollowable('a SET column of an UPDATE of several tables without its table');
      target.writes.push({ action: 'update', columns: [this.columnName(item.column)] });
      this.visit(item.value, scope, ctes);
    }
    this.visitFields(node, scope, ctes, ['with', 'table', 'from', 'set']);
  }

  /** `table` names the rows' table (maybe by a FROM alias); `from` lists the sources, the target included. */
  private delete(node: SqlNode, parent: Scope, outerCtes: CteNames): void {
    const ctes = this.withClause(node.with, parent, outerCtes);
    const scope = newScope(parent);
    for (const item of list(node.from)) this.fromItem(item, scope, ctes);
    const targets = list(node.table);
    if (targets.length === 0) unfollowable('a DELETE without a named table');
    for (const item of targets) {
      const target = this.aliasedSource(item, scope) ?? this.sameRelation(item, scope);
      if (!target?.relation) unfollowable('a DELETE target that is not one of its FROM tables');
      target.writes.push({ action: 'delete', columns: [] });
      if (target === scope.sources[0]) target.read = false;
    }
    this.visitFields(node, scope, ctes, ['with', 'table', 'from']);
  }

  /** A DML target written as the bare alias (or name) of a source already registered: `UPDATE o … FROM sales.orders o`. */
  private aliasedSource(item: unknown, scope: Scope): Source | undefined {
    if (!isObject(item) || item.db != null || typeof item.table !== 'string') return undefined;
    const name = this.fold(item.table);
    const source = scope.sources.find((candidate) => candidate.exposedName === name);
    if (source) this.seen.add(`::${name}`);
    return source;
  }

  /** The registered source of the same relation as `item` (a DELETE repeats its FROM table under `table`). */
  private sameRelation(item: unknown, scope: Scope): Source | undefined {
    if (!isObject(item)) return undefined;
    const name = this.relationName(item);
    return scope.sources.find((source) => source.relation?.name === name.name && source.relation.schema === name.schema
      && source.relation.database === name.database);
  }

  private withClause(items: unknown, scope: Scope, outer: CteNames): CteNames {
    const ctes = list(items).filter(isObject);
    if (ctes.length === 0) return outer;
    const names = ctes.map((cte) => this.fold(this.text(cte.name)));
    const all = new Set([...outer, ...names]);
    const recursive = ctes.some((cte) => cte.recursive === true);
    ctes.forEach((cte, position) => {
      const visible = recursive ? all : new Set([...outer, ...names.slice(0, position)]);
      const body = isObject(cte.stmt) && isObject(cte.stmt.ast) ? cte.stmt.ast : cte.stmt;
      if (!isObject(body)) unfollowable('a WITH clause of this shape');
      this.statement(body, scope, visible);
    });
    return all;
  }

  /** Registers one FROM item (with its join condition) and returns its source; DUAL has none. */
  private fromItem(item: unknown, scope: Scope, ctes: CteNames): Source | undefined {
    if (!isObject(item)) return unfollowable('a FROM item of this shape');
    if (item.type === 'dual') return undefined;
    if (item.operator != null) unfollowable('PIVOT or UNPIVOT');
    let source: Source;
    if (item.expr !== undefined) {
      // A subquery or a table function: a derived table whose reads are its own.
      this.visit(item.expr, scope, ctes);
      source = { exposedName: this.optionalName(item.as), read: false, writes: [] };
      scope.sources.push(source);
    } else if (typeof item.table === 'string') {
      source = this.relationSource(item, scope, ctes, true);
    } else {
      return unfollowable('a FROM item of this shape');
    }
    if (isObject(item.table_hint) && this.takesLocks(item.table_hint)) this.lockRows(scope, 'a locking table hint locks rows');
    for (const name of list(item.using)) scope.columns.push({ qualifier: [], column: this.columnName(name) });
    if (typeof item.join === 'string' && item.join.toUpperCase().includes('NATURAL')) {
      // NATURAL JOIN compares every column the two sides share: count them all as read.
      for (const source of scope.sources) {
        if (source.relation && source.exposedName !== undefined) scope.columns.push({ qualifier: [source.exposedName], column: ALL_COLUMNS });
      }
    }
    this.visit(item.on, scope, ctes);
    return source;
  }

  private relationSource(item: SqlNode, scope: Scope, ctes: CteNames, read: boolean): Source {
    const relation = this.relationName(item);
    const exposedName = this.optionalName(item.as) ?? relation.name;
    const isCte = relation.schema === undefined && relation.database === undefined && ctes.has(relation.name);
    this.seen.add(`${[relation.database, relation.schema].filter((part) => part !== undefined).join('.')}::${relation.name}`);
    const source: Source = isCte ? { exposedName, read: false, writes: [] } : { exposedName, relation, read, writes: [] };
    scope.sources.push(source);
    return source;
  }

  /** MySQL and two-part T-SQL names put the schema under `db`; three-part T-SQL names add `schema`. */
  private relationName(item: SqlNode): RelationName {
    const name = this.fold(this.text(item.table));
    const first = this.optionalName(item.db);
    const second = this.optionalName(item.schema);
    if (second !== undefined) return { name, schema: second, ...(first === undefined ? {} : { database: first }) };
    return first === undefined ? { name } : { name, schema: first };
  }

  private visit(value: unknown, scope: Scope, ctes: CteNames): void {
    if (Array.isArray(value)) {
      for (const item of value) this.visit(item, scope, ctes);
      return;
    }
    if (!isObject(value)) return;
    // A subquery: `{ ast, tableList, columnList }` in older shapes, the bare statement in others.
    if (isObject(value.ast)) return this.statement(value.ast, scope, ctes);
    switch (value.type) {
      case 'select':
        return this.select(value, scope, ctes);
      case 'insert':
      case 'update':
      case 'delete':
      case 'replace':
        this.writes ??= 'a data-modifying statement inside a query changes data';
        return this.statement(value, scope, ctes);
      case 'column_ref':
        scope.columns.push(this.columnUse(value));
        return;
      case 'double_quote_string':
      case 'backticks_quote_string':
        // Identifiers where the server reads "..." as one (SQL Server, Oracle); where it reads a string (MySQL,
        // unless ANSI_QUOTES), counted if a column has the name.
        scope.columns.push({ qualifier: [], column: this.fold(this.text(value.value)), ...(this.syntax.lexicon.doubleQuotes === 'string' && value.type === 'double_quote_string' ? { ifColumn: true } : {}) });
        return;
      case 'function':
        if (!isSyntaxCall(value.name)) this.functions.push(this.functionUse(value.name));
        return this.visitFields(value, scope, ctes, ['name']);
      case 'aggr_func':
        this.functions.push({ name: this.fold(this.text(value.name)) });
        return this.visitFields(value, scope, ctes, ['name']);
      case 'var':
        // `@@version`, `@@session.sql_mode`, `@x` (MySQL): server state, or session state another caller of
        // the pooled connection may have left. Bound values (`:p1`) are vars with another prefix.
        if (value.prefix === '@@' || value.prefix === '@') this.functions.push({ name: variableName(value), form: 'variable' });
        return this.visitFields(value, scope, ctes, []);
      default:
        // A table reference in a place not handled above: record it as read rather than miss it.
        if (value.type === undefined && typeof value.table === 'string' && 'db' in value) {
          this.relationSource(value, scope, ctes, true);
          return;
        }
        this.visitFields(value, scope, ctes, []);
    }
  }

  private visitFields(node: SqlNode, scope: Scope, ctes: CteNames, skip: readonly string[]): void {
    for (const [field, value] of Object.entries(node)) {
      // tableList and columnList repeat, as strings, what the AST beside them says.
      if (!skip.includes(field) && field !== 'tableList' && field !== 'columnList') this.visit(value, scope, ctes);
    }
  }

  private columnUse(node: SqlNode): ColumnUse {
    const qualifier = [node.db, node.schema, node.table]
      .map((part) => this.optionalName(part))
      .filter((part): part is string => part !== undefined);
    const column = this.columnName(node.column);
    if (column === '*') return { qualifier, column: ALL_COLUMNS };
    return { qualifier, column, ...(qualifier.length === 0 && column.startsWith('@') ? { ifColumn: true } : {}) };
  }

  private functionUse(name: unknown): FunctionUse {
    if (!isObject(name)) return { name: this.fold(this.text(name)) };
    const parts = list(name.name).map((part) => this.fold(this.text(part)));
    const schema = this.optionalName(name.schema);
    // `db.schema.fn` arrives as a schema and a two-part name.
    const [last = '', ...before] = [...parts].reverse();
    const qualifiers = [...before.reverse(), ...(schema === undefined ? [] : [schema])];
    const [database, functionSchema] = qualifiers.length > 1 ? qualifiers : [undefined, qualifiers[0]];
    return { name: last, ...(functionSchema === undefined ? {} : { schema: functionSchema }), ...(database === undefined ? {} : { database }) };
  }

  private lockRows(scope: Scope, why: string): void {
    this.writes ??= why;
    for (const source of scope.sources) if (source.relation) source.writes.push({ action: 'update', columns: [] });
  }

  private takesLocks(hint: SqlNode): boolean {
    return JSON.stringify(hint).toLowerCase().match(/[a-z]+/g)?.some((word) => LOCKING_HINTS.has(word)) ?? false;
  }

  private columnName(value: unknown): string {
    return this.fold(this.text(value));
  }

  private optionalName(value: unknown): string | undefined {
    const text = this.text(value);
    return text === '' ? undefined : this.fold(text);
  }

  /** The text of a name in any of the parser's shapes: `'x'`, `{ value }`, `{ expr: { value } }`. */
  private text(value: unknown): string {
    if (typeof value === 'string') return value;
    if (!isObject(value)) return '';
    if (isObject(value.expr)) return this.text(value.expr);
    return typeof value.value === 'string' ? value.value : '';
  }

  /**
   * Names as the server folds them (Oracle: upper case). The AST does not say which names were quoted, so a
   * dialect that folds refuses quoted names its folding would change (its text hazards).
   */
  private fold(name: string): string {
    return this.syntax.foldIdentifier(name);
  }
}

/** A one-part, unquoted name of `SYNTAX_CALLS`: a predicate or constructor, not a function. */
function isSyntaxCall(name: unknown): boolean {
  const parts = isObject(name) && name.schema == null ? list(name.name) : [];
  const [part] = parts;
  return parts.length === 1 && isObject(part) && part.type === 'default' && typeof part.value === 'string'
    && SYNTAX_CALLS.has(part.value.toLowerCase());
}

/** `@@session.sql_mode` as written, from the parser's `{ prefix, name, members }`. */
function variableName(node: SqlNode): string {
  return `${String(node.prefix)}${[node.name, ...list(node.members)].map(String).join('.')}`;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isObject(value: unknown): value is SqlNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
