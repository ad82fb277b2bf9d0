/**
 * How a dialect's SQL text is written: its quotes and comments, what it does to unquoted names, and how
 * bound values appear in it. The core's scanners and the grammars read these from the dialect rather than
 * knowing any server; each must match the server, or a quoted stretch could end where the server's does not.
 */

/** What the server does to an unquoted identifier: PostgreSQL lowers it, Oracle uppers it, MySQL and SQL Server keep it. */
export type UnquotedCase = 'lower' | 'upper' | 'preserve';

/** How the server quotes and comments. */
export interface SqlLexicon {
  /** Inside '...', a backslash escapes the next character: always (MySQL), only in E'...' (PostgreSQL), never. */
  stringBackslash: 'always' | 'e-prefix' | 'never';
  /** "..." is a string with the escapes of '...' (MySQL default mode), or an identifier (`""` escape only). */
  doubleQuotes: 'string' | 'identifier';
  /** `` `name` `` is a quoted identifier (MySQL). */
  backticks: boolean;
  /** `[name]` is a quoted identifier (SQL Server). */
  brackets: boolean;
  /** `#` starts a comment to the end of the line (MySQL). */
  hashComments: boolean;
  /** MySQL reads `--` as a comment only when whitespace follows. */
  dashCommentNeedsSpace: boolean;
  /** A block comment opened inside a block comment nests (PostgreSQL, SQL Server): the outer one ends at the second close. */
  nestedBlockComments: boolean;
  /** `$tag$...$tag$` is a string (PostgreSQL). */
  dollarQuotes: boolean;
  /** Oracle q'[...]' literals: their delimiters are arbitrary, so they are refused rather than guessed. */
  refuseQQuotes: boolean;
  /** MySQL/MariaDB executable comments (/*! ... *\/) hold code: refused. */
  refuseExecutableComments: boolean;
}

/** How bound values reach the server: the core sends `?` per value through knex.raw, the knex client rewrites it. */
export interface PlaceholderStyle {
  /**
   * What the n-th `?` (1-based) becomes on the wire, so a grammar parses the text the server receives:
   * `(n) => '$' + n` gives `$1` (PostgreSQL). Absent when the server receives `?` itself (MySQL).
   */
  numbered?: (n: number) => string;
  /**
   * True when the knex client reads `\?` as a literal question mark (pg, mssql); otherwise every `?` is a
   * bound value (mysql2 formats them all, knex's Oracle client numbers them all) and a literal one is refused.
   */
  escapedQuestionMark: boolean;
}

/** The part of a dialect that says how its SQL is written: what the scanners, grammars and name matching read. */
export interface DialectSyntax {
  /** Quotes and comments, for the scanners that must find where the server's strings and comments end. */
  readonly lexicon: SqlLexicon;
  /** How bound values appear in the text the server receives. */
  readonly placeholders: PlaceholderStyle;
  /**
   * True when column and function names match the catalog without regard to case, every matching spelling
   * counting (MySQL, SQL Server, Oracle); false when they match exactly (PostgreSQL, whose parser folds).
   */
  readonly caseInsensitiveNames: boolean;
  /** Quotes one identifier, e.g. `"order"` or `` `order` ``. */
  quoteIdentifier(name: string): string;
  /** An unquoted identifier as the server reads it, e.g. `orders` → `ORDERS` in Oracle. */
  foldIdentifier(name: string): string;
}
