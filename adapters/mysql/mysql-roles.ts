import { JOURNAL_SCHEMA } from './mysql-action-journal.js';
import {
  placeholders, type JsonValue, type PlannedRole, type RoleChange, type RoleLoginSecretSql, type RolePrivilege, type RoleState, type RoleStateRequest, type SqlExecutor,
} from '../../core/plugin-api/adapter-kit.js';

/**
 * The data roles' users on MySQL and MariaDB (docs/governed-execution.md). A role's privileges add to those
 * of the login that activates it, so a caller cannot run as a role: each role the core plans is a user of
 * its own, `'<name>'@'%'`, holding its privileges itself, and the service logs in as it. What the users
 * hold is read from information_schema and mysql.procs_priv (the login needs to read the mysql schema).
 */

type Row = Record<string, JsonValue>;

/** The lock that makes the syncs of several instances run one after another; a session lock, released by `MYSQL_SYNC_END`. */
const SYNC_LOCK = 'vdb-service data roles';
/** The seconds a sync waits for another instance's. */
const SYNC_LOCK_WAIT_S = 60;

export const MYSQL_SYNC_END = [`do release_lock('${SYNC_LOCK}')`];

/** Every planned user is `…@'%'`: its password is derived from `MYSQL_LOGIN_SECRET`, set at each start (`MYSQL_PASSWORD_SQL`). */
export const HOST = "'%'";

/** Sets a user's password (both values bound) and unlocks it: the sync creates users locked. */
export const MYSQL_PASSWORD_SQL = `alter user ?@${HOST} identified by ? account unlock`;

/**
 * The secret the users' passwords are derived from, made once by the first sync (under its lock) in the
 * service's own database, which no user of a data role may read: every instance on the server sets the same
 * passwords.
 */
export const MYSQL_LOGIN_SECRET: RoleLoginSecretSql = {
  setupSql: [
    `create database if not exists ${JOURNAL_SCHEMA} character set utf8mb4 collate utf8mb4_bin`,
    `create table if not exists ${JOURNAL_SCHEMA}.login_secret (secret varchar(64) not null)`,
  ],
  keepSql: `insert into ${JOURNAL_SCHEMA}.login_secret (secret) select ? from dual where not exists (select 1 from ${JOURNAL_SCHEMA}.login_secret)`,
  secretSql: `select secret from ${JOURNAL_SCHEMA}.login_secret limit 1`,
};

/**
 * The roles as users: MySQL has no schema usage (a table privilege is enough), and a combination, which
 * PostgreSQL makes a member of its data roles, holds their privileges itself.
 */
export function mysqlRolePlan<T extends PlannedRole>(roles: readonly T[]): T[] {
  const byName = new Map(roles.map((role) => [role.name, role]));
  return roles.map((role) => {
    const held = [role, ...role.memberOf.map((name) => byName.get(name)).filter((member): member is T => member !== undefined)]
      .flatMap((member) => member.privileges)
      .filter((privilege) => privilege.kind !== 'schema');
    const union = new Map(held.map((privilege) => [JSON.stringify(privilege), privilege]));
    return { ...role, memberOf: [], privileges: [...union.values()] };
  });
}

export async function readMysqlRoles(executor: SqlExecutor, request: RoleStateRequest): Promise<RoleState> {
  const rows = async (sql: string, bindings: readonly unknown[]): Promise<Row[]> => (await executor.query(sql, bindings)).rows;
  const text = (row: Row, column: string) => String(row[column]);
  if (request.lock) {
    const [locked] = await rows('select get_lock(?, ?) as locked', [SYNC_LOCK, SYNC_LOCK_WAIT_S]);
    if (String(locked?.['locked']) !== '1') throw new Error(`another instance held the lock "${SYNC_LOCK}" for ${SYNC_LOCK_WAIT_S} s`);
  }
  // `in ()` does not parse: an empty list stands as the empty name, which no user has
  const roles = request.roles.length > 0 ? request.roles : [''];
  const grantees = roles.map((role) => `'${role}'@'%'`);
  const schemas = request.schemas.length > 0 ? request.schemas : [''];
  const roleOf = new Map(roles.map((role, index) => [grantees[index], role]));

  const existing = (await rows(`select User as name from mysql.user where Host = '%' and User in (${placeholders(roles)})`, roles)).map((row) => text(row, 'name'));
  const privileges = (await grantedObjects(rows, grantees)).map(({ grantee, privilege }) => ({ role: roleOf.get(grantee) ?? '', privilege }));
  // Proc_priv is a set, e.g. `Execute,Alter Routine`; the routine's kind tells `function` from `procedure` in a GRANT
  for (const row of await rows(`select User as role_name, Db as schema_name, Routine_name as routine_name, lower(Routine_type) as routine_kind, Proc_priv as actions
from mysql.procs_priv where Host = '%' and Db <> ? and User in (${placeholders(roles)})`, [JOURNAL_SCHEMA, ...roles])) {
    for (const granted of text(row, 'actions').split(',').filter((part) => part !== '')) {
      privileges.push({
        role: text(row, 'role_name'),
        privilege: { kind: 'routine', action: granted.toLowerCase(), schema: text(row, 'schema_name'), routine: text(row, 'routine_name'), arguments: text(row, 'routine_kind') },
      });
    }
  }
  const routines = (await rows(`select ROUTINE_SCHEMA as schema_name, ROUTINE_NAME as routine_name, lower(ROUTINE_TYPE) as routine_kind
from information_schema.ROUTINES where ROUTINE_SCHEMA in (${placeholders(schemas)})`, schemas))
    .map((row) => ({ schema: text(row, 'schema_name'), routine: text(row, 'routine_name'), arguments: text(row, 'routine_kind') }));
  const [login] = await rows('select current_user() as name', []);
  // MariaDB 10.11's PUBLIC: what it holds on the VDBs' databases every user holds, whatever its grants (MySQL has none)
  const publicPrivileges = (await grantedObjects(rows, [PUBLIC])).map((entry) => entry.privilege).filter((privilege) => schemas.includes(privilege.schema));
  return {
    existing,
    // users hold their privileges themselves: no membership, no sequences a table's inserts use
    memberships: [],
    privileges,
    publicPrivileges,
    ownedSequences: [],
    routines,
    marked: [],
    // the service never switches users: it logs in as each
    login: { name: login ? text(login, 'name') : '', superuser: false, canBecome: request.roles },
  };
}

type Rows = (sql: string, bindings: readonly unknown[]) => Promise<Row[]>;

/** How information_schema names MariaDB's PUBLIC as a grantee. */
const PUBLIC = "'PUBLIC'@''";

/** What the accounts (`'name'@'host'`) hold on schemas, tables and columns, from information_schema. */
async function grantedObjects(rows: Rows, grantees: readonly string[]): Promise<{ grantee: string; privilege: RolePrivilege }[]> {
  const text = (row: Row, column: string) => String(row[column]);
  const action = (row: Row) => text(row, 'action').toLowerCase();
  const inGrantees = `in (${placeholders(grantees)})`;
  const found: { grantee: string; privilege: RolePrivilege }[] = [];
  for (const row of await rows(`select GRANTEE as grantee, TABLE_SCHEMA as schema_name, PRIVILEGE_TYPE as action
from information_schema.SCHEMA_PRIVILEGES where GRANTEE ${inGrantees}`, grantees)) {
    found.push({ grantee: text(row, 'grantee'), privilege: { kind: 'schema', action: action(row), schema: text(row, 'schema_name') } });
  }
  for (const row of await rows(`select GRANTEE as grantee, TABLE_SCHEMA as schema_name, TABLE_NAME as relation_name, PRIVILEGE_TYPE as action
from information_schema.TABLE_PRIVILEGES where GRANTEE ${inGrantees}`, grantees)) {
    found.push({ grantee: text(row, 'grantee'), privilege: { kind: 'relation', action: action(row), schema: text(row, 'schema_name'), relation: text(row, 'relation_name') } });
  }
  for (const row of await rows(`select GRANTEE as grantee, TABLE_SCHEMA as schema_name, TABLE_NAME as relation_name, COLUMN_NAME as column_name,
  PRIVILEGE_TYPE as action
from information_schema.COLUMN_PRIVILEGES where GRANTEE ${inGrantees}`, grantees)) {
    found.push({
      grantee: text(row, 'grantee'),
      privilege: { kind: 'column', action: action(row), schema: text(row, 'schema_name'), relation: text(row, 'relation_name'), column: text(row, 'column_name') },
    });
  }
  return found;
}

/**
 * What the logged-in user holds on schemas, tables and columns, read as it: information_schema shows a
 * user its own privileges (routines' are in mysql.procs_priv, which it may not read).
 */
export async function readMysqlOwnPrivileges(rows: Rows): Promise<{ account: string; privileges: RolePrivilege[] }> {
  const [me] = await rows(`select concat('''', substring_index(current_user(), '@', 1), '''@''', substring_index(current_user(), '@', -1), '''') as account`, []);
  const account = String(me?.['account'] ?? '');
  return { account, privileges: (await grantedObjects(rows, [account])).map((entry) => entry.privilege) };
}

/** The statements of one change; `quote` is the dialect's `quoteIdentifier`. */
export function mysqlRoleChangeSql(change: RoleChange, quote: (name: string) => string): string[] {
  switch (change.kind) {
    case 'create':
      // locked until the sync sets its password (MYSQL_PASSWORD_SQL): never a user without one that may log in
      return [`create user ${quote(change.role)}@${HOST} account lock`];
    case 'drop':
      return [`drop user ${quote(change.role)}@${HOST}`];
    case 'grant':
      return [`grant ${privilegeOn(change.privilege, quote)} to ${quote(change.role)}@${HOST}`];
    case 'revoke':
      return [`revoke ${privilegeOn(change.privilege, quote)} from ${quote(change.role)}@${HOST}`];
    case 'grantMembership':
    case 'revokeMembership':
      // the service's login never switches: it logs in as each user
      if (change.login) return [];
      throw new Error(`MySQL users of data roles hold their privileges themselves: no membership (${change.role} in ${change.memberOf})`);
  }
}

/** `select (`email`) on `shop`.`customers``. */
function privilegeOn(privilege: RolePrivilege, quote: (name: string) => string): string {
  // the action is a keyword, never quoted: only the privilege names the server reports are written (`show view`)
  if (!/^[a-z]+( [a-z]+)*$/.test(privilege.action)) throw new Error(`not a privilege: ${privilege.action}`);
  switch (privilege.kind) {
    case 'schema':
      return `${privilege.action} on ${quote(privilege.schema)}.*`;
    case 'relation':
      return `${privilege.action} on ${quote(privilege.schema)}.${quote(privilege.relation)}`;
    case 'column':
      return `${privilege.action} (${quote(privilege.column)}) on ${quote(privilege.schema)}.${quote(privilege.relation)}`;
    case 'routine':
      return `${privilege.action} on ${privilege.arguments === 'procedure' ? 'procedure' : 'function'} ${quote(privilege.schema)}.${quote(privilege.routine)}`;
    case 'sequence':
      throw new Error(`MySQL users of data roles hold no sequence privileges (${privilege.schema}.${privilege.sequence})`);
  }
}
