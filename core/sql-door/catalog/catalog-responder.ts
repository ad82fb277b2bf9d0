import { CatalogMirrors } from './catalog-mirrors.js';
import { CatalogQueryError } from './catalog-query-error.js';
import { catalogStatement, loadCatalogGrammar } from './catalog-statement.js';
import type { CatalogCaller, CatalogResponder } from './catalog-types.js';
import type { CatalogStatement } from './catalog-statement.js';

export interface CatalogResponderOptions {
  /** Mirrors kept at once (about 170 MB each); default 4. */
  maxMirrors?: number;
  /** A catalog statement's time limit; over it the statement fails with 57014. Default 10 s. */
  statementTimeoutMs?: number;
  /** A mirror unused this long ends its worker thread, giving its memory back. Default 10 minutes. */
  mirrorIdleMs?: number;
  /** Rows a catalog answer may hold; more fail with 54000. Default 100,000. */
  maxRows?: number;
}

/**
 * The responder the SQL front door asks first about each statement (index.ts). Loads the grammar it needs;
 * the mirrors' snapshot (initdb, seconds) is made on `prepare()`, which the door calls when a client has
 * connected, so that a service whose door nobody uses never pays for it.
 */
export async function createCatalogResponder(options: CatalogResponderOptions = {}): Promise<CatalogResponder> {
  await loadCatalogGrammar();
  const mirrors = new CatalogMirrors(options.maxMirrors ?? 4, options.mirrorIdleMs ?? 600_000);
  const timeoutMs = options.statementTimeoutMs ?? 10_000;
  const maxRows = options.maxRows ?? 100_000;
  return {
    handles: (sql) => catalogStatement(sql) !== undefined,
    prepare: () => mirrors.prepare(),
    async answer(sql, params, caller, searchPath) {
      const statement = claimed(sql);
      const mirror = await mirrors.mirrorFor(caller);
      const result = await mirror.request({ kind: 'query', sql: statement.mirrorSql, params, maxRows, ...(searchPath !== undefined && { searchPath }) }, timeoutMs);
      return {
        fields: result.fields.map((field) => ({ name: field.name, typeOid: field.dataTypeID })),
        rows: result.rows,
        command: statement.kind === 'show' ? 'SHOW' : `SELECT ${result.rows.length}`,
      };
    },
    async describe(sql: string, caller: CatalogCaller) {
      const statement = claimed(sql);
      const mirror = await mirrors.mirrorFor(caller);
      const described = await mirror.request({ kind: 'describe', sql: statement.mirrorSql }, timeoutMs);
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
