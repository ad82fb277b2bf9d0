import { planVdbRoles } from '../../core/authorization/role-plan.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { coreTokens } from '../../core/service-tokens.js';
import type { TestService } from './test-service.js';

/**
 * Drops the database roles a service synced for its VDBs (the service's one datasource being `datasource`),
 * and `others`: PostgreSQL roles and MySQL users belong to the whole server and would outlive the suite.
 * PostgreSQL: their privileges go first (`drop owned by`); MySQL: `drop user` takes them.
 */
export async function dropSyncedRoles(service: TestService | undefined, datasource: Datasource, others: readonly string[] = []): Promise<void> {
  const { dialect } = datasource;
  if (!dialect.capabilities.enforcesRoles) return;
  const vdbs = service?.container.resolve(coreTokens.vdbs).list() ?? [];
  const planned = vdbs.flatMap((vdb) => [...new Set(vdb.schemas.map((schema) => schema.datasource))]
    .flatMap((name) => planVdbRoles(vdb, name, dialect.maxRoleNameBytes)?.roles.map((role) => role.name) ?? []));
  const names = [...new Set([...planned, ...others])];
  if (names.length === 0) return;
  const list = names.map(() => '?').join(', ');
  if (dialect.family === 'mysql') {
    const existing = (await datasource.query(`select User as name from mysql.user where Host = '%' and User in (${list})`, names)).rows;
    for (const row of existing) await datasource.query(`drop user ${dialect.quoteIdentifier(String(row['name']))}@'%'`, []);
    return;
  }
  const existing = (await datasource.query(`select rolname from pg_catalog.pg_roles where rolname in (${list})`, names)).rows;
  for (const row of existing) {
    const role = dialect.quoteIdentifier(String(row['rolname']));
    await datasource.query(`drop owned by ${role}`, []);
    await datasource.query(`drop role ${role}`, []);
  }
}

/**
 * The end of a suite over a server datasource: the roles the service synced (and `others`) dropped, `teardown`
 * run, the datasource closed; nothing when it never opened.
 */
export async function releaseDatasource(
  service: TestService | undefined, datasource: Datasource | undefined, teardown: readonly string[], others: readonly string[] = [],
): Promise<void> {
  if (!datasource) return;
  await dropSyncedRoles(service, datasource, others);
  for (const statement of teardown) await datasource.query(statement, []);
  await datasource.close();
}
