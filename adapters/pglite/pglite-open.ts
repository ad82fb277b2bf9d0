import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { StartupError, UnavailableError, messageOf, createKnex, type DatasourceSettings, type SqlDialect } from '../../core/plugin-api/index.js';
import { PgliteDatasource } from './pglite-datasource.js';
import { pgliteTypeParsers } from './pglite-types.js';

/** The datasource `connection` of a pglite datasource (plugin.json holds its JSON Schema). */
export interface PgliteConnection {
  /** Folder of the database files, relative to the config file's folder; absent: in memory. */
  dataDir?: string;
}

/**
 * Opens the embedded database. Init scripts run once, when the database is new (in memory, or a data
 * folder that is absent or empty), all in one transaction; if one fails, the new folder is removed so the
 * next start tries again from scratch.
 */
export async function openPglite(dialect: SqlDialect, settings: DatasourceSettings): Promise<PgliteDatasource> {
  const { dataDir } = settings.connection as PgliteConnection;
  const dir = dataDir === undefined ? undefined : resolve(settings.baseDir, dataDir);
  const isNew = dir === undefined || !existsSync(dir) || readdirSync(dir).length === 0;

  let db: PGlite;
  try {
    // PGlite creates the data folder but not its parents (a fresh clone has no .data/).
    if (dir !== undefined) mkdirSync(dirname(dir), { recursive: true });
    db = await PGlite.create({ ...(dir === undefined ? {} : { dataDir: dir }), parsers: pgliteTypeParsers });
  } catch (error) {
    throw new UnavailableError('datasource_unavailable', `datasource "${settings.name}" could not open its embedded database`, {
      details: { datasource: settings.name },
      cause: error,
    });
  }

  if (isNew && settings.init.length > 0) {
    try {
      await runInitScripts(db, settings);
    } catch (error) {
      await db.close().catch(() => undefined);
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  const client = createKnex({
    client: ClientPgLite,
    // knex-pglite takes an open instance through a connection function.
    connection: (() => ({ pglite: db })) as unknown as Knex.Config['connection'],
  });
  return new PgliteDatasource(settings.name, dialect, client, db);
}

async function runInitScripts(db: PGlite, settings: DatasourceSettings): Promise<void> {
  await db.transaction(async (tx) => {
    for (const script of settings.init) {
      let sql: string;
      try {
        sql = readFileSync(script, 'utf8');
      } catch (error) {
        throw StartupError.of([{ file: script, message: `datasource ${settings.name}: cannot read init script: ${messageOf(error)}` }]);
      }
      try {
        await tx.exec(sql);
      } catch (error) {
        throw StartupError.of([{ file: script, message: `datasource ${settings.name}: init script failed: ${messageOf(error)}` }]);
      }
    }
  });
}
