import { CatalogMirrors } from './catalog-mirrors.js';
import { CatalogQueryError } from './catalog-query-error.js';
import { refusedCall } from './catalog-functions.js';
import { catalogStatement, loadCatalogGrammar } from './catalog-statement.js';
import type { CatalogCaller, CatalogLimits, CatalogResponder } from './catalog-types.js';
import type { CatalogStatement } from './catalog-statement.js';

export interface CatalogResponderOptions {
  /** Mirrors kept at once (about 170 MB a thread); default 4. */
  maxMirrors?: number;
  /** Threads one mirror may open while statements wait on it (each about 170 MB); default 3. */
  threadsPerMirror?: number;
  /** A catalog statement's time limit; over it the statement fails with 57014. Default 10 s. */
  statementTimeoutMs?: number;
  /** A mirror unused this long ends its worker thread, giving its memory back. Default 10 minutes. */
  mirrorIdleMs?: number;
  /** Rows a catalog answer may hold; more fail with 54000. Default 100,000. */
  maxRows?: number;
  /** Bytes of values a catalog answer may hold when the caller gives no budget; more fail with 54000. Default 16 MiB. */
  maxBytes?: number;
}

/** Who asks, when the caller of `answer` does not say: statements of such callers run one at a time. */
const ANYONE = '';

/**
 * The responder the SQL front door asks first about each statement (index.ts). Loads the grammar it needs;
 * the mirrors' snapshot (initdb, seconds) is made on `prepare()`, which the door calls when a client has
 * connected, so that a service whose door nobody uses never pays for it.
 */
export async function createCatalogResponder(options: CatalogResponderOptions = {}): Promise<CatalogResponder> {
  await loadCatalogGrammar();
  const mirrors = new CatalogMirrors(options.maxMirrors ?? 4, options.mirrorIdleMs ?? 600_000, options.threadsPerMirror ?? 3);
  const timeoutMs = options.statementTimeoutMs ?? 10_000;
  const maxRows = options.maxRows ?? 100_000;
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const bounds = (limits: CatalogLimits) => ({
    timeoutMs: Math.min(timeoutMs, limits.timeoutMs ?? timeoutMs),
    signal: limits.signal,
    owner: limits.owner ?? ANYONE,
  });
  return {
    handles: (sql) => catalogStatement(sql) !== undefined,
    refusedFunction: (sql, allowed) => refusedCall(claimed(sql).calls, allowed),
    prepare: () => mirrors.prepare(),
    async answer(sql, params, caller, limits = {}, searchPath) {
      const statement = claimed(sql);
      const result = await mirrors.mirrorFor(caller).run(
        { kind: 'query', sql: statement.mirrorSql, params, maxRows, maxBytes: limits.maxBytes ?? maxBytes, ...(searchPath !== undefined && { searchPath }) },
        bounds(limits),
      );
      return {
        fields: result.fields.map((field) => ({ name: field.name, typeOid: field.dataTypeID })),
        rows: result.rows,
        command: statement.kind === 'show' ? 'SHOW' : `SELECT ${result.rows.length}`,
      };
    },
    async describe(sql: string, caller: CatalogCaller, limits = {}) {
      const statement = claimed(sql);
      const described = await mirrors.mirrorFor(caller).run({ kind: 'describe', sql: statement.mirrorSql }, bounds(limits));
      return {
        paramTypeOids: described.params,
        fields: described.fields.map((field) => ({ name: field.name, typeOid: field.dataTypeID })),
      };
    },
    close: () => mirrors.close(),
  };
}

/** The mirror holds no data, yet only what `handles` claims is run there. */
function claimed(sql: string): CatalogStatement {
  const statement = catalogStatement(sql);
  if (statement === undefined) throw new CatalogQueryError('0A000', 'not a catalog statement: it reads relations or calls functions outside pg_catalog and information_schema');
  return statement;
}
