import type { SqlExecutor } from '../../core/plugin-api/adapter-kit.js';

/**
 * The login of a restricted PGlite session: no superuser, no database or role creation, and no privilege
 * of its member roles until a statement runs SET ROLE to one of them (NOINHERIT).
 */
export const AUTHENTICATOR = 'vdb_authenticator';

const ATTRIBUTES = 'login nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls';

/**
 * Creates AUTHENTICATOR if absent (or resets its attributes) and makes it a member of exactly `memberOf`,
 * on a transaction of the superuser session. Fails, for the transaction to change nothing, when a role of
 * `memberOf` is missing or would lead to a superuser (SET ROLE to it would give the rights back).
 */
export async function grantAuthenticator(transaction: SqlExecutor, memberOf: readonly string[], quote: (name: string) => string): Promise<void> {
  const run = (sql: string, bindings: readonly unknown[] = []) => transaction.query(sql, bindings);
  const login = quote(AUTHENTICATOR);
  const exists = await run('select 1 from pg_catalog.pg_roles where rolname = ?', [AUTHENTICATOR]);
  await run(`${exists.rows.length === 0 ? 'create' : 'alter'} role ${login} ${ATTRIBUTES}`);
  // every membership goes, whoever granted it; the listed ones come back as this session's grants
  const granted = await run(
    `select r.rolname as role, g.rolname as grantor
from pg_catalog.pg_auth_members m
join pg_catalog.pg_roles r on r.oid = m.roleid
join pg_catalog.pg_roles g on g.oid = m.grantor
where m.member = (select oid from pg_catalog.pg_roles where rolname = ?)`,
    [AUTHENTICATOR],
  );
  for (const row of granted.rows) {
    await run(`revoke ${quote(String(row['role']))} from ${login} granted by ${quote(String(row['grantor']))}`);
  }
  for (const role of new Set(memberOf)) await run(`grant ${quote(role)} to ${login} with inherit false, set true`);
  const superusers = await run(
    `select rolname from pg_catalog.pg_roles where rolsuper and pg_catalog.pg_has_role(?, oid, 'MEMBER')`,
    [AUTHENTICATOR],
  );
  const reached = superusers.rows[0]?.['rolname'];
  if (reached !== undefined) throw new Error(`${AUTHENTICATOR} would reach the superuser role ${String(reached)} through its memberships`);
}
