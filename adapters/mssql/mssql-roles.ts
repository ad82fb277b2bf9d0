import type { RoleChange, RolePrivilege } from '../../core/plugin-api/adapter-kit.js';

/**
 * The data roles on SQL Server (docs/governed-execution.md), as statements: not run against a server yet
 * (`capabilities.enforcesRoles` stays false until a suite proves them on one), tested as compiled text.
 *
 * Each planned role is a database role holding its grants (a combination: a member of its data roles'
 * roles, which SQL Server adds up), plus a user without login, a member of it, that a caller's statement
 * runs as: `EXECUTE AS USER` takes a user, never a role. The service's login needs `IMPERSONATE` on it.
 */

/** The user a caller's statements run as for `role`: roles and users share one namespace, so it is suffixed. */
export function mssqlCallerUser(role: string): string {
  return `${role}_user`;
}

/** The statements of one change; `quote` is the dialect's `quoteIdentifier` (`[name]`). */
export function mssqlRoleChangeSql(change: RoleChange, quote: (name: string) => string): string[] {
  const user = quote(mssqlCallerUser(change.role));
  switch (change.kind) {
    case 'create':
      return [`create role ${quote(change.role)}`, `create user ${user} without login`, `alter role ${quote(change.role)} add member ${user}`];
    case 'drop':
      return [`drop user ${user}`, `drop role ${quote(change.role)}`];
    case 'grantMembership':
      return change.login
        ? [`grant impersonate on user::${quote(mssqlCallerUser(change.memberOf))} to ${quote(change.role)}`]
        : [`alter role ${quote(change.memberOf)} add member ${quote(change.role)}`];
    case 'revokeMembership':
      return change.login
        ? [`revoke impersonate on user::${quote(mssqlCallerUser(change.memberOf))} from ${quote(change.role)}`]
        : [`alter role ${quote(change.memberOf)} drop member ${quote(change.role)}`];
    case 'grant':
      return [`grant ${privilegeOn(change.privilege, quote)} to ${quote(change.role)}`];
    case 'revoke':
      return [`revoke ${privilegeOn(change.privilege, quote)} from ${quote(change.role)}`];
  }
}

/** `select on [sales].[customers] ([id], [region])`. */
function privilegeOn(privilege: RolePrivilege, quote: (name: string) => string): string {
  if (!/^[a-z]+$/.test(privilege.action)) throw new Error(`not a privilege: ${privilege.action}`);
  switch (privilege.kind) {
    case 'relation':
      return `${privilege.action} on ${quote(privilege.schema)}.${quote(privilege.relation)}`;
    case 'column':
      return `${privilege.action} on ${quote(privilege.schema)}.${quote(privilege.relation)} (${quote(privilege.column)})`;
    case 'routine':
      return `${privilege.action} on ${quote(privilege.schema)}.${quote(privilege.routine)}`;
    case 'sequence':
      // NEXT VALUE FOR needs update on the sequence
      return `update on ${quote(privilege.schema)}.${quote(privilege.sequence)}`;
    case 'schema':
      throw new Error(`SQL Server roles of data roles hold no schema privilege (${privilege.action} on ${privilege.schema})`);
  }
}

/**
 * One statement of a caller as `role`, in one batch: impersonated with a cookie only this batch knows, so
 * that the statement cannot `REVERT` to the service's login, and reverted whether it fails or not. A
 * read-only route runs it in a transaction that is always rolled back (SQL Server has no read-only
 * transaction). The caller's user name is bound first (`?`), before the statement's own values.
 */
export function mssqlCallerBatch(sql: string, readOnly: boolean): string {
  return `set xact_abort on;
declare @vdb_cookie varbinary(100);
begin transaction;
execute as user = ? with cookie into @vdb_cookie;
begin try
${sql}
end try
begin catch
  revert with cookie = @vdb_cookie;
  if @@trancount > 0 rollback transaction;
  throw;
end catch;
revert with cookie = @vdb_cookie;
${readOnly ? 'rollback' : 'commit'} transaction;`;
}
