import { createHash } from 'node:crypto';
import { LruCache } from '../../core/plugin-api/adapter-kit.js';

/** What a statement's key runs as: the text sent, under `name` where it is prepared. */
export interface PreparedText {
  readonly text: string;
  /** Undefined: the text runs unnamed (too long, or its result changed since it was named). */
  readonly name: string | undefined;
}

/** Texts longer than this run unnamed and are not kept: a caller sending huge texts fills no cache. */
const MAX_NAMED_TEXT_LENGTH = 16_384;

/**
 * The prepared statements of one datasource, for its statements and the SQL door's forwarded ones: the
 * name of each text (derived from it, so the same on every connection), and what each connection parsed.
 *
 * The server keeps a prepared statement for the life of its connection. At most `budget` texts have a name
 * at a time, the least recently used giving its place to a new one (the budget is refunded on eviction, so
 * new texts are still prepared after any number of distinct ones); a connection that has parsed `budget`
 * names is retired once its statement ends (`full`), so that no connection holds more than that on the
 * server whatever callers send.
 */
export class PreparedStatements {
  private readonly texts: LruCache<string, PreparedText>;
  /** The names each connection has parsed, by the connection (a pg client). */
  private readonly parsedBy = new WeakMap<object, Set<string>>();

  constructor(private readonly prefix: string, private readonly budget = 500) {
    this.texts = new LruCache(budget);
  }

  /**
   * What `key` runs as, named where `named` (a text without values may hold several statements, which
   * cannot be prepared); `native` makes the text to send from the key, once. A key over the length limit
   * runs unnamed, uncached.
   */
  of(key: string, named: boolean, native: (key: string) => string): PreparedText {
    const known = this.texts.get(key);
    if (known !== undefined) return known;
    const text = native(key);
    if (key.length > MAX_NAMED_TEXT_LENGTH) return { text, name: undefined };
    const prepared = { text, name: named ? `${this.prefix}${createHash('sha256').update(key).digest('base64url').slice(0, 32)}` : undefined };
    this.texts.set(key, prepared);
    return prepared;
  }

  /** What `key` runs as for one run only (`QueryOptions.planEachRun`): unnamed, whether or not it has a name. */
  unnamed(key: string, native: (key: string) => string): PreparedText {
    return { text: this.texts.get(key)?.text ?? native(key), name: undefined };
  }

  /** The key's result changed on the database (DDL) after it was prepared: it runs unnamed from now on. */
  unname(key: string, prepared: PreparedText): void {
    this.texts.set(key, { text: prepared.text, name: undefined });
  }

  /** The names `connection` has parsed: a run adds its name once the server parsed it, deletes it when lost. */
  parsedOn(connection: object): Set<string> {
    let parsed = this.parsedBy.get(connection);
    if (parsed === undefined) this.parsedBy.set(connection, (parsed = new Set()));
    return parsed;
  }

  /** Whether `connection` holds its share of prepared statements: it is retired rather than handed out again. */
  full(connection: object): boolean {
    return (this.parsedBy.get(connection)?.size ?? 0) >= this.budget;
  }
}
