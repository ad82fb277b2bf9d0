import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StartupError, UnavailableError, messageOf, type DatasourceSettings, type SqlDialect } from '../../core/plugin-api/adapter-kit.js';
import { PgliteDatasource } from './pglite-datasource.js';
import { PgliteHost, SETUP_LIMIT_MS } from './pglite-host.js';
import { pgliteKnex } from './pglite-knex.js';

/** The datasource `connection` of a pglite datasource (plugin.json holds its JSON Schema). */
export interface PgliteConnection {
  /** Folder of the database files, relative to the config file's folder; absent: in memory. */
  dataDir?: string;
}

/**
 * Opens the embedded database in its worker thread. Init scripts run once, when the database is new (in
 * memory, or a data folder that is absent or empty), all in one transaction; if one fails, the new folder
 * is removed so the next start tries again from scratch. An in-memory database then keeps a snapshot of
 * itself: a worker reopened after a statement over its limit starts from it.
 */
export async function openPglite(dialect: SqlDialect, settings: DatasourceSettings): Promise<PgliteDatasource> {
  const { dataDir } = settings.connection as PgliteConnection;
  const dir = dataDir === undefined ? undefined : resolve(settings.baseDir, dataDir);
  const isNew = dir === undefined || !existsSync(dir) || readdirSync(dir).length === 0;

  const host = new PgliteHost(dir, settings.name);
  try {
    // PGlite creates the data folder but not its parents (a fresh clone has no .data/).
    if (dir !== undefined) mkdirSync(dirname(dir), { recursive: true });
    await host.start();
  } catch (error) {
    await host.close();
    throw new UnavailableError('datasource_unavailable', `datasource "${settings.name}" could not open its embedded database`, {
      details: { datasource: settings.name },
      cause: error,
    });
  }

  try {
    if (isNew && settings.init.length > 0) await runInitScripts(host, settings);
    await host.keepSnapshot();
  } catch (error) {
    await host.close();
    if (isNew && dir !== undefined) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return new PgliteDatasource(settings.name, dialect, pgliteKnex(host), host);
}

/** Init scripts are the operator's own and may load much: each is bounded by the setup limit, not a statement's. */
async function runInitScripts(host: PgliteHost, settings: DatasourceSettings): Promise<void> {
  const scripts = settings.init.map((script) => {
    try {
      return { script, sql: readFileSync(script, 'utf8') };
    } catch (error) {
      throw StartupError.of([{ file: script, message: `datasource ${settings.name}: cannot read init script: ${messageOf(error)}` }]);
    }
  });
  await host.exec('begin');
  for (const { script, sql } of scripts) {
    try {
      await host.exec(sql, { timeoutMs: SETUP_LIMIT_MS });
    } catch (error) {
      await host.exec('rollback').catch(() => undefined);
      throw StartupError.of([{ file: script, message: `datasource ${settings.name}: init script failed: ${messageOf(error)}` }]);
    }
  }
  await host.exec('commit');
}
