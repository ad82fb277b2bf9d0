import type { RoleChange, RolePrivilege } from '../../core/plugin-api/adapter-kit.js';

/**
 * The data roles on Oracle (docs/governed-execution.md), as statements: not run against a server yet
 * (`capabilities.enforcesRoles` stays false until a suite proves them on one), tested as compiled text.
 *
 * Each planned role is a role holding its grants (a combination: granted its data roles' roles), plus a
 * proxy user with no password of its own that holds only that role, through which the service's login
 * connects for a caller (`login[proxy_user]`): `ALTER USER … GRANT CONNECT THROUGH … WITH ROLE …`.
 * Oracle grants SELECT on whole tables and views only: a column-limited read needs a view per role, which
 * the sync does not make yet, so such a plan is refused rather than widened.
 */

/** The proxy user of `role`: roles and users share one namespace, so it is suffixed. */
export function oracleProxyUser(role: string): string {
  return `${role}_user`;
}

/** The statements of one change; `quote` is the dialect's `quoteIdentifier` (names kept as planned). */
export function oracleRoleChangeSql(change: RoleChange, quote: (name: string) => string): string[] {
  const user = quote(oracleProxyUser(change.role));
  switch (change.kind) {
    case 'create':
      return [
        `create role ${quote(change.role)} not identified`,
        `create user ${user} no authentication`,
        `grant create session to ${user}`,
        `grant ${quote(change.role)} to ${user}`,
      ];
    case 'drop':
      return [`drop user ${user}`, `drop role ${quote(change.role)}`];
    case 'grantMembership':
      return change.login
        ? [`alter user ${quote(oracleProxyUser(change.memberOf))} grant connect through ${quote(change.role)} with role ${quote(change.memberOf)}`]
        : [`grant ${quote(change.memberOf)} to ${quote(change.role)}`];
    case 'revokeMembership':
      return change.login
        ? [`alter user ${quote(oracleProxyUser(change.memberOf))} revoke connect through ${quote(change.role)}`]
        : [`revoke ${quote(change.memberOf)} from ${quote(change.role)}`];
    case 'grant':
      return [`grant ${privilegeOn(change.privilege, quote)} to ${quote(change.role)}`];
    case 'revoke':
      return [`revoke ${privilegeOn(change.privilege, quote)} from ${quote(change.role)}`];
  }
}

/** `update ("EMAIL") on "SALES"."CUSTOMERS"`. */
function privilegeOn(privilege: RolePrivilege, quote: (name: string) => string): string {
  if (!/^[a-z]+$/.test(privilege.action)) throw new Error(`not a privilege: ${privilege.action}`);
  switch (privilege.kind) {
    case 'relation':
      return `${privilege.action} on ${quote(privilege.schema)}.${quote(privilege.relation)}`;
    case 'column':
      // Oracle takes columns for insert, update and references only
      if (privilege.action === 'select') {
        throw new Error(`Oracle grants select on whole relations only: ${privilege.schema}.${privilege.relation}.${privilege.column} needs a view`);
      }
      return `${privilege.action} (${quote(privilege.column)}) on ${quote(privilege.schema)}.${quote(privilege.relation)}`;
    case 'routine':
      return `${privilege.action} on ${quote(privilege.schema)}.${quote(privilege.routine)}`;
    case 'sequence':
      return `select on ${quote(privilege.schema)}.${quote(privilege.sequence)}`;
    case 'schema':
      throw new Error(`Oracle roles of data roles hold no schema privilege (${privilege.action} on ${privilege.schema})`);
  }
}

/**
 * The `user` a pool of the service's login connects with to run as `role` (node-oracledb proxy
 * authentication: the login's password, the proxy user's identity and only the role the proxy grant names).
 * A read-only route begins each transaction with `set transaction read only`.
 */
export function oracleProxyLogin(login: string, role: string): string {
  return `${login}[${oracleProxyUser(role)}]`;
}
