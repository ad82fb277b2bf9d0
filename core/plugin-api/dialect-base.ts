/**
 * The base every dialect adapter extends: what a dialect is, beyond opening datasources. An adapter states
 * its family, lexicon, placeholders and grammar, overrides the defaults that differ for its server, and
 * implements `open` and `logicalType`.
 */
import { NO_BUILTIN_FUNCTIONS, type FunctionPolicy } from './builtin-functions.js';
import type { LogicalType } from './catalog.js';
import type { PlannedRole, RoleChange, RoleState, RoleStateRequest } from './database-roles.js';
import type { Datasource, DatasourceSettings, DialectCapabilities, SqlDialect, SqlExecutor, SqlFamily } from './sql-dialect.js';
import type { SqlGrammar } from './sql-grammar.js';
import { ANSI_SEMANTIC_SYNTAX, type SemanticSqlSyntax } from './semantic-query-syntax.js';
import type { PlaceholderStyle, SqlLexicon, UnquotedCase } from './sql-syntax.js';

/** A pooled server without an EXPLAIN the core may use, whose database does not enforce the data roles. */
const POOLED: DialectCapabilities = { explain: false, enforcesRoles: false };

/** The base every `sqlDialect` plugin extends: required members are abstract, the rest have the defaults of docs/plugins.md. */
export abstract class DialectBase implements SqlDialect {
  abstract readonly family: SqlFamily;
  abstract readonly lexicon: SqlLexicon;
  abstract readonly placeholders: PlaceholderStyle;
  readonly capabilities: DialectCapabilities = POOLED;
  /** The quotes `quoteIdentifier` writes, open and close: `"` by default, `` ` `` in MySQL, `[` `]` in SQL Server. */
  readonly identifierQuotes: readonly [open: string, close: string] = ['"', '"'];
  /** What the server does to unquoted identifiers; `foldIdentifier` applies it. */
  readonly unquotedCase: UnquotedCase = 'preserve';
  /** By default names match without case: every spelling counts, so the authorizer errs toward refusing. */
  readonly caseInsensitiveNames: boolean = true;
  /** Deny by default: a dialect that lists no built-ins lets statements call none. */
  readonly functionPolicy: FunctionPolicy = NO_BUILTIN_FUNCTIONS;
  /** The SQL forms of semantic queries: ANSI by default; a dialect whose server differs states its own. */
  readonly semanticSyntax: SemanticSqlSyntax = ANSI_SEMANTIC_SYNTAX;
  private builtGrammar: SqlGrammar | undefined;

  constructor(readonly id: string) {}

  /** Built on first use, when the subclass's fields (which the grammar reads) are set. */
  get grammar(): SqlGrammar {
    this.builtGrammar ??= this.createGrammar();
    return this.builtGrammar;
  }

  /** The dialect's parser, e.g. `nodeSqlParserGrammar(this, { database: 'MySQL', ... })`. */
  protected abstract createGrammar(): SqlGrammar;

  abstract open(settings: DatasourceSettings): Promise<Datasource>;

  abstract logicalType(nativeType: string): LogicalType;

  /** Between the identifier quotes, the closing quote doubled: `"a""b"`, `[a]]b]`. */
  quoteIdentifier(name: string): string {
    const [open, close] = this.identifierQuotes;
    return `${open}${name.replaceAll(close, close + close)}${close}`;
  }

  /** Overridden, with `capabilities.enforcesRoles`, by dialects whose database enforces the data roles. */
  readRoles(_executor: SqlExecutor, _request: RoleStateRequest): Promise<RoleState> {
    return Promise.reject(new Error(`dialect ${this.id} does not enforce data roles`));
  }

  /** Overridden with `readRoles`. */
  roleChangeSql(_change: RoleChange): string[] {
    throw new Error(`dialect ${this.id} does not enforce data roles`);
  }

  /** PostgreSQL's identifier limit by default. */
  readonly maxRoleNameBytes: number = 63;

  /**
   * The core plans roles as PostgreSQL holds them: `usage` on schemas, combination roles that are members
   * of the data roles' roles. A database without one of these overrides this (MySQL: a user per role set,
   * holding the union of its data roles' privileges itself).
   */
  rolePlan<T extends PlannedRole>(roles: readonly T[]): T[] {
    return [...roles];
  }

  /** Undefined: the session switches to the caller's role (`SET ROLE`); a dialect with a login per role overrides it. */
  loginPasswordSql(): string | undefined {
    return undefined;
  }

  roleSyncEndSql(): string[] {
    return [];
  }

  /**
   * A read-only statement rewritten so that the server refuses any row over a size, before sending it: the
   * text's last `?` is that size in bytes, and a row over it fails with an error whose message holds
   * `ROW_TOO_LARGE_MARK`. Undefined where the dialect has no such rewrite; a server's own packet limit then
   * bounds a value (MySQL's `max_allowed_packet`). A driver that reads a whole value into memory must not be
   * handed one larger than the process can hold.
   */
  boundRowBytes(_sql: string): string | undefined {
    return undefined;
  }

  foldIdentifier(name: string): string {
    switch (this.unquotedCase) {
      case 'lower': return name.toLowerCase();
      case 'upper': return name.toUpperCase();
      case 'preserve': return name;
    }
  }
}

/** In the message of the error a statement fails with when `DialectBase.boundRowBytes` refused a row. */
export const ROW_TOO_LARGE_MARK = 'vdb_row_too_large';
