import { createHash } from 'node:crypto';

/**
 * Names for the statements a datasource prepares, derived from their text: the same text gets the same name
 * on every connection. The server keeps a prepared statement for the life of its connection, so at most
 * `limit` distinct texts are given a name (a caller sending endless distinct texts must not fill the server's
 * memory); past it, texts run unnamed.
 */
export class StatementNames {
  private given = 0;

  constructor(private readonly prefix: string, private readonly limit = 500) {}

  /** A name for `text`, or undefined once `limit` names were given. */
  next(text: string): string | undefined {
    if (this.given >= this.limit) return undefined;
    this.given += 1;
    return `${this.prefix}${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
  }
}
