/**
 * What a statement reads and writes, taken from its syntax alone: no catalog, no grants. Both parsers
 * (libpg-query, node-sql-parser) produce this shape; it depends only on the SQL text and the dialect's grammar,
 * so the authorizer caches it per grammar and text. Names are already folded to the dialect's case rules.
 */
import type { DataAction } from './vdb.js';

/** What a statement does, as the authorizer sorts it. */
export type StatementKind = 'select' | 'insert' | 'update' | 'delete' | 'other';

/** What one statement reads and writes, as the authorizer checks it against the grants. */
export interface StatementFacts {
  kind: StatementKind;
  /** How the statement is called in messages, e.g. `SELECT` or `SET`. */
  label: string;
  /** Why a SELECT still changes something (a data-modifying CTE, FOR UPDATE, INTO); absent otherwise. */
  writes?: string;
  /** Why the statement can never be authorized (a kind other than SELECT/INSERT/UPDATE/DELETE). */
  unsupported?: string;
  root: Scope;
  functions: FunctionUse[];
}

/** One query level: what its FROM clause (or DML target) exposes and the column references made in it. */
export interface Scope {
  sources: Source[];
  columns: ColumnUse[];
  /** Nested query levels (subqueries, CTE bodies, set-operation branches); they also see this level. */
  children: Scope[];
}

/** A relation as a statement names it, possibly qualified. */
export interface RelationName {
  /** A database or catalog prefix (`db.schema.relation`): such names reach outside the VDB. */
  database?: string;
  schema?: string;
  name: string;
}

/** Something a column reference can name: a relation, or a derived table (CTE, subquery, function, VALUES). */
export interface Source {
  /** The name column references qualify with: the alias, else the relation's own name. */
  exposedName: string | undefined;
  /** The relation behind it; absent for a derived table, whose own reads are recorded in its scope. */
  relation?: RelationName;
  /** New names for the relation's first columns, in catalog order: `sales.customers c(a, b)`. */
  columnAliases?: string[];
  /** The statement reads the relation (FROM, JOIN, USING), so it needs select on it. */
  read: boolean;
  /** What the statement writes to it: DML targets, and FOR UPDATE locks. */
  writes: RelationWrite[];
}

/** A change a statement makes to a relation. */
export interface RelationWrite {
  action: Exclude<DataAction, 'select'>;
  /** The columns assigned; `all` when an INSERT names no column list; empty for DELETE and locks. */
  columns: string[] | 'all';
}

/** The column name that stands for every column of a relation (`*`, `t.*`, a whole-row reference). */
export const ALL_COLUMNS = '*';

/** A column the statement reads, as written: `c.email` has qualifier `['c']`. */
export interface ColumnUse {
  qualifier: string[];
  column: string;
  /**
   * Counted when it names a column, ignored when it names none: a double-quoted MySQL string (a name under
   * ANSI_QUOTES), or an `@name` the parser reads as a column (a T-SQL variable or bound value).
   */
  ifColumn?: boolean;
}

/** A function call a statement makes, as its grammar names it. */
export interface FunctionUse {
  database?: string;
  schema?: string;
  name: string;
  /**
   * Absent for a call. `operator`: `OPERATOR(schema.op)`, which names an operator, not a function of the
   * allow-list. `variable`: a server or session variable read (MySQL `@@version`, `@x`), always refused.
   */
  form?: 'operator' | 'variable';
}

/** A new scope of a statement, added as a child of `parent`. */
export function newScope(parent?: Scope): Scope {
  const scope: Scope = { sources: [], columns: [], children: [] };
  parent?.children.push(scope);
  return scope;
}

/** A relation name as people write it, for messages: `sales.orders`. */
export function formatRelationName(name: RelationName): string {
  return [name.database, name.schema, name.name].filter((part) => part !== undefined).join('.');
}
