/**
 * Binds a statement's facts to a VDB catalog: every relation to a catalog relation (or a refusal), every
 * column reference to the relation(s) it can read, every function call to a built-in or a VDB function.
 * Where the database could resolve a name more than one way, every way counts: over-counting can refuse a
 * statement that was fine, under-counting could let a column through.
 */
import type { CatalogFunction } from '../plugin-api/catalog.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { DataAction, VdbRelation } from '../plugin-api/vdb.js';
import type { CatalogIndex } from './catalog-index.js';
import { deny, statementTooComplex, type Denial } from '../plugin-api/denial.js';
import { bareNameKind, isAllowedBuiltin, isBuiltinSchema } from './function-policy.js';
import {
  ALL_COLUMNS, formatRelationName,
  type ColumnUse, type FunctionUse, type RelationName, type Scope, type Source, type StatementFacts,
} from '../plugin-api/statement-facts.js';

export interface RelationAccess {
  relation: VdbRelation;
  action: DataAction;
  /** Columns read or written, as the catalog spells them, first use first; empty: the relation as a whole. */
  columns: string[];
  /**
   * Those of `columns` the statement names; the others it reaches without naming them (`*`, a whole-row
   * reference, an INSERT without a column list, a column renamed by an alias list), and a refusal does not
   * name them: the caller may not know they exist.
   */
  named: string[];
}

/** A column reference no relation could be shown to own: refused when a candidate has column-level grants. */
export interface UnattributedColumn {
  /** The reference as written, e.g. `j.email`. */
  reference: string;
  /** Every relation visible where it is used. */
  candidates: VdbRelation[];
}

export interface ResolvedStatement {
  /** One entry per relation and action, relations in statement order. */
  accesses: RelationAccess[];
  /** The VDB functions the statement calls (built-ins are not listed). */
  functions: CatalogFunction[];
  unattributed: UnattributedColumn[];
}

/** What the resolver asks of the dialect: its function policy, and its case rules for names. */
export type ResolvingDialect = Pick<SqlDialect, 'functionPolicy' | 'foldIdentifier' | 'caseInsensitiveNames'>;

/** `allowFunctions`: the VDB's additions to the dialect's allow-list of built-ins. */
export function resolveStatement(
  facts: StatementFacts, catalog: CatalogIndex, dialect: ResolvingDialect, allowFunctions: readonly string[] = [],
): ResolvedStatement | Denial {
  const resolver = new StatementResolver(catalog, dialect, allowFunctions);
  try {
    resolver.relations(facts.root);
    resolver.columns(facts.root, []);
    resolver.functions(facts.functions);
  } catch (error) {
    if (error instanceof Refusal) return error.denial;
    // The walk recurses per query level: a nesting the parser took can still exhaust the stack here.
    if (error instanceof RangeError) return statementTooComplex('nests too deeply to be authorized');
    throw error;
  }
  return resolver.result();
}

/** Carries a denial out of the recursive walk. */
class Refusal extends Error {
  constructor(readonly denial: Denial) {
    super(denial.reason);
  }
}

class StatementResolver {
  /** Columns needed per relation and action, in the order first needed. */
  private readonly accesses = new Map<VdbRelation, Map<DataAction, Set<string>>>();
  /** The columns of each relation the statement names (RelationAccess.named). */
  private readonly named = new Map<VdbRelation, Set<string>>();
  private readonly relationOf = new Map<Source, VdbRelation>();
  private readonly calledFunctions = new Set<CatalogFunction>();
  private readonly unattributed: UnattributedColumn[] = [];

  constructor(
    private readonly catalog: CatalogIndex,
    private readonly dialect: ResolvingDialect,
    private readonly allowFunctions: readonly string[],
  ) {}

  result(): ResolvedStatement {
    return {
      accesses: [...this.accesses].flatMap(([relation, byAction]) =>
        [...byAction].map(([action, columns]) => ({
          relation, action, columns: [...columns], named: [...columns].filter((column) => this.named.get(relation)?.has(column) ?? false),
        }))),
      functions: [...this.calledFunctions],
      unattributed: this.unattributed,
    };
  }

  /** Every source of every level, outer before inner, so a denial names the first relation written. */
  relations(scope: Scope): void {
    for (const source of scope.sources) {
      if (!source.relation) continue;
      const relation = this.lookup(source.relation);
      this.relationOf.set(source, relation);
      if (source.read) this.need(relation, 'select', []);
      for (const write of source.writes) {
        const columns = write.columns === 'all'
          ? this.catalog.columnNames(relation)
          : write.columns.flatMap((column) => this.spellings(relation, column));
        this.need(relation, write.action, columns, write.columns !== 'all');
      }
    }
    for (const child of scope.children) this.relations(child);
  }

  /** `outer` lists the enclosing levels, innermost first: a subquery can name their sources too. */
  columns(scope: Scope, outer: Scope[]): void {
    const visible = [scope, ...outer];
    for (const use of scope.columns) {
      if (use.qualifier.length > 0) this.qualifiedColumn(use, visible);
      else if (use.column === ALL_COLUMNS) this.everyColumnOf(scope.sources);
      else this.unqualifiedColumn(use, visible);
    }
    for (const child of scope.children) this.columns(child, visible);
  }

  functions(uses: readonly FunctionUse[]): void {
    for (const use of uses) {
      const written = [use.database, use.schema, use.name].filter((part) => part !== undefined).join('.');
      if (use.form === 'variable') {
        this.refuse(deny('function_not_allowed', `${written} reads a server or session variable, which is not allowed`, written));
      }
      if (use.database !== undefined) {
        this.refuse(deny('function_not_allowed', `function ${written} names another database: only functions of the VDB and built-ins can be called`, written));
      }
      if (use.schema === undefined || isBuiltinSchema(this.dialect, use.schema)) {
        this.builtin(use, written);
        continue;
      }
      const matches = this.catalog.functions(use.schema, use.name);
      if (matches.length === 0) {
        this.refuse(deny('function_not_allowed', this.catalog.schemas.has(use.schema)
          ? `function ${written} is not a function of the VDB`
          : `function ${written} is in schema ${use.schema}, which is not part of the VDB`, written));
      }
      for (const fn of matches) this.calledFunctions.add(fn);
    }
  }

  /** An unqualified call, or one qualified with a built-in schema: a built-in, which must be on the allow-list. */
  private builtin(use: FunctionUse, written: string): void {
    // An operator of the server's own schema is no function of the list; it reads only its operands.
    if (use.form === 'operator') return;
    const namesakes = use.schema === undefined ? this.catalog.functionsNamed(use.name) : [];
    if (!isAllowedBuiltin(this.dialect, use.name, this.allowFunctions)) {
      const [namesake] = namesakes;
      const hint = namesake ? `call the VDB's function as ${namesake.schema}.${namesake.name}` : 'a VDB may add it with allowFunctions';
      this.refuse(deny('function_not_allowed', `function ${written} is not allowed (not on the allow-list; ${hint})`, written));
    }
    // The search path could send an unqualified call to a VDB function of that name: it needs its grant.
    for (const fn of namesakes) this.calledFunctions.add(fn);
  }

  private lookup(name: RelationName): VdbRelation {
    const relation = name.database === undefined && name.schema !== undefined ? this.catalog.relation(name.schema, name.name) : undefined;
    if (relation) return relation;
    const written = formatRelationName(name);
    if (name.database !== undefined) {
      this.refuse(deny('unknown_relation', `relation ${written} names another database: only relations of the VDB can be used`, written));
    }
    if (name.schema === undefined) {
      this.refuse(deny('unqualified_relation',
        `relation ${written} is not schema-qualified: the database's search path, not the VDB, would choose it; write schema.${name.name}`, written));
    }
    return this.refuse(deny('unknown_relation', `relation ${written} is not part of the VDB`, written));
  }

  /** `c.email`, `sales.customers.email`, `c.*`: the innermost level with a source of that name decides. */
  private qualifiedColumn(use: ColumnUse, visible: Scope[]): void {
    for (const level of visible) {
      const matches = level.sources.filter((source) => exposes(source, use.qualifier));
      if (matches.length === 0) continue;
      for (const source of matches) {
        const relation = this.relationOf.get(source);
        if (!relation) continue;
        const spellings = use.column === ALL_COLUMNS ? [] : this.columnsNamed(source, relation, use.column);
        // `c.*`, or `c.fn` (PostgreSQL's call notation on the whole row): every column is read.
        if (spellings.length > 0) this.need(relation, 'select', spellings, source.columnAliases === undefined);
        else this.need(relation, 'select', this.catalog.columnNames(relation));
      }
      return;
    }
    const reference = [...use.qualifier, use.column].join('.');
    if (bareNameKind(this.dialect, reference) === 'call') this.refuseBareName(reference);
    this.unattributed.push({ reference, candidates: this.relationsIn(visible) });
  }

  /**
   * An unqualified name is a column of a relation of the innermost level that has one, else a whole-row
   * reference (`select c from sales.customers c`). The search goes on outward past whole-row matches
   * and case-insensitive matches, where the database may still find the column further out.
   */
  private unqualifiedColumn(use: ColumnUse, visible: Scope[]): void {
    let attributed = false;
    let derivedVisible = false;
    for (const level of visible) {
      let exact = false;
      for (const source of level.sources) {
        const relation = this.relationOf.get(source);
        if (!relation) {
          derivedVisible = true;
          continue;
        }
        const spellings = this.columnsNamed(source, relation, use.column);
        if (spellings.length > 0) {
          this.need(relation, 'select', spellings, source.columnAliases === undefined);
          attributed = true;
          exact ||= spellings.includes(use.column);
        } else if (source.exposedName === use.column) {
          this.need(relation, 'select', this.catalog.columnNames(relation));
          attributed = true;
        }
      }
      if (exact) return;
    }
    if (attributed || use.ifColumn) return;
    const kind = bareNameKind(this.dialect, use.column);
    if (kind === 'builtin') return;
    if (kind === 'call') this.refuseBareName(use.column);
    // No relation has the column, so a derived table (whose reads were counted in its own level) must; or the
    // name is no column at all.
    if (derivedVisible) return;
    this.unattributed.push({ reference: use.column, candidates: this.relationsIn(visible) });
  }

  private refuseBareName(reference: string): never {
    return this.refuse(deny('function_not_allowed',
      `${reference} is no column of a relation of the statement, and Oracle would call a function of that name; qualify columns of subqueries and CTEs with their alias`,
      reference));
  }

  /** The catalog columns a name reaches through the source, which may have renamed them. */
  private columnsNamed(source: Source, relation: VdbRelation, column: string): string[] {
    const aliases = source.columnAliases;
    if (!aliases) return this.catalog.matchColumn(relation, column);
    return this.catalog.columnNames(relation).filter((name, position) => (aliases[position] ?? name) === column);
  }

  private everyColumnOf(sources: readonly Source[]): void {
    for (const source of sources) {
      const relation = this.relationOf.get(source);
      if (relation) this.need(relation, 'select', this.catalog.columnNames(relation));
    }
  }

  private relationsIn(levels: readonly Scope[]): VdbRelation[] {
    const relations = new Set<VdbRelation>();
    for (const level of levels) {
      for (const source of level.sources) {
        const relation = this.relationOf.get(source);
        if (relation) relations.add(relation);
      }
    }
    return [...relations];
  }

  /** The catalog spellings of a written column; an unknown column stays as written (the grant check sees it). */
  private spellings(relation: VdbRelation, column: string): string[] {
    const matches = this.catalog.matchColumn(relation, column);
    return matches.length > 0 ? matches : [column];
  }

  /** `named`: the statement wrote these columns' names (not `*`, a whole row, or an alias list's new names). */
  private need(relation: VdbRelation, action: DataAction, columns: readonly string[], named = false): void {
    let byAction = this.accesses.get(relation);
    if (!byAction) this.accesses.set(relation, (byAction = new Map()));
    let needed = byAction.get(action);
    if (!needed) byAction.set(action, (needed = new Set()));
    for (const column of columns) needed.add(column);
    if (!named) return;
    let written = this.named.get(relation);
    if (!written) this.named.set(relation, (written = new Set()));
    for (const column of columns) written.add(column);
  }

  private refuse(denial: Denial): never {
    throw new Refusal(denial);
  }
}

/**
 * Whether a qualifier names the source: `c` its exposed name (the alias, else the relation's name);
 * `sales.customers` and `db.sales.customers` an unaliased relation (an alias hides the relation's name).
 */
function exposes(source: Source, qualifier: readonly string[]): boolean {
  if (qualifier.length === 1) return source.exposedName === qualifier[0];
  const relation = source.relation;
  if (!relation || source.exposedName !== relation.name || qualifier.length > 3) return false;
  const [name, schema] = [...qualifier].reverse();
  return relation.name === name && relation.schema === schema;
}
