import {
  placeholders, type JsonValue, type RoleChange, type RolePrivilege, type RoleState, type RoleStateRequest, type SqlExecutor,
} from '../../core/plugin-api/adapter-kit.js';

/**
 * The data roles' database roles on PostgreSQL (and PGlite): what they hold, read from pg_catalog's ACLs,
 * and the GRANT / REVOKE / CREATE ROLE statements of each change. Names are bound when read and quoted by
 * the dialect when written.
 */

type Row = Record<string, JsonValue>;

export async function readPostgresRoles(executor: SqlExecutor, request: RoleStateRequest): Promise<RoleState> {
  const rows = async (sql: string, bindings: readonly unknown[]): Promise<Row[]> => (await executor.query(sql, bindings)).rows;
  const text = (row: Row, column: string) => String(row[column]);
  // syncs of several instances run one after another, each reading what the previous one wrote
  if (request.lock) await rows(`select pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('vdb-service data roles'))`, []);
  // the roles the sync created, planned or not: what those no data role stands for any more hold is read too
  const marked = (await rows(`select r.rolname, substr(d.description, ${ROLE_MARK.length + 1}) as vdb_name
from pg_catalog.pg_roles r
join pg_catalog.pg_shdescription d on d.objoid = r.oid and d.classoid = 'pg_catalog.pg_authid'::pg_catalog.regclass
where starts_with(d.description, ?)`, [ROLE_MARK])).map((row) => ({ role: text(row, 'rolname'), vdb: text(row, 'vdb_name') }));
  const planned = new Set(request.roles);
  // `in ()` does not parse: an empty list stands as the empty name, which no role has
  const roles = [...request.roles, ...marked.map((mark) => mark.role).filter((role) => !planned.has(role))];
  if (roles.length === 0) roles.push('');
  const inRoles = `in (${placeholders(roles)})`;
  const schemas = request.schemas.length > 0 ? request.schemas : [''];
  const inSchemas = `in (${placeholders(schemas)})`;

  const existing = (await rows(`select rolname from pg_catalog.pg_roles where rolname ${inRoles}`, roles)).map((row) => text(row, 'rolname'));
  const memberships = (await rows(`select m.rolname as role_name, g.rolname as member_of
from pg_catalog.pg_auth_members am
join pg_catalog.pg_roles m on m.oid = am.member
join pg_catalog.pg_roles g on g.oid = am.roleid
where m.rolname ${inRoles}`, roles)).map((row) => ({ role: text(row, 'role_name'), memberOf: text(row, 'member_of') }));

  const schemaAcl = await rows(`select g.rolname as grantee, n.nspname as schema_name, lower(a.privilege_type) as action
from pg_catalog.pg_namespace n
cross join lateral pg_catalog.aclexplode(n.nspacl) a
join pg_catalog.pg_roles g on g.oid = a.grantee
where g.rolname ${inRoles}`, roles);
  // tables, views, materialized views, foreign tables, sequences; grantee 0 is PUBLIC
  const relationAcl = await rows(`select coalesce(g.rolname, '') as grantee, n.nspname as schema_name, c.relname as relation_name,
  c.relkind::text as relation_kind, lower(a.privilege_type) as action
from pg_catalog.pg_class c
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
cross join lateral pg_catalog.aclexplode(c.relacl) a
left join pg_catalog.pg_roles g on g.oid = a.grantee
where c.relkind in ('r', 'p', 'f', 'v', 'm', 'S') and (g.rolname ${inRoles} or (a.grantee = 0 and n.nspname ${inSchemas}))`, [...roles, ...schemas]);
  const columnAcl = await rows(`select g.rolname as grantee, n.nspname as schema_name, c.relname as relation_name, att.attname as column_name,
  lower(a.privilege_type) as action
from pg_catalog.pg_attribute att
join pg_catalog.pg_class c on c.oid = att.attrelid
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
cross join lateral pg_catalog.aclexplode(att.attacl) a
join pg_catalog.pg_roles g on g.oid = a.grantee
where att.attacl is not null and att.attnum > 0 and not att.attisdropped and g.rolname ${inRoles}`, roles);

  // user routines of the planned schemas (not of an extension, not triggers: none can be called in a query);
  // no ACL means the default one: PUBLIC may execute
  const routineAcl = await rows(`select coalesce(g.rolname, '') as grantee, n.nspname as schema_name, p.proname as routine_name,
  pg_catalog.pg_get_function_identity_arguments(p.oid) as arguments, lower(a.privilege_type) as action
from pg_catalog.pg_proc p
join pg_catalog.pg_namespace n on n.oid = p.pronamespace
cross join lateral pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
left join pg_catalog.pg_roles g on g.oid = a.grantee
where g.rolname ${inRoles} or (a.grantee = 0 and n.nspname ${inSchemas}
  and p.prorettype not in ('pg_catalog.trigger'::pg_catalog.regtype, 'pg_catalog.event_trigger'::pg_catalog.regtype)
  and not exists (select 1 from pg_catalog.pg_depend d
    where d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass and d.objid = p.oid and d.deptype = 'e'))`, [...roles, ...schemas]);
  const routines = (await rows(`select n.nspname as schema_name, p.proname as routine_name, pg_catalog.pg_get_function_identity_arguments(p.oid) as arguments
from pg_catalog.pg_proc p
join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where n.nspname ${inSchemas}`, schemas)).map((row) => ({ schema: text(row, 'schema_name'), routine: text(row, 'routine_name'), arguments: text(row, 'arguments') }));

  const privileges: { role: string; privilege: RolePrivilege }[] = [];
  const publicPrivileges: RolePrivilege[] = [];
  for (const row of schemaAcl) {
    privileges.push({ role: text(row, 'grantee'), privilege: { kind: 'schema', action: text(row, 'action'), schema: text(row, 'schema_name') } });
  }
  for (const row of relationAcl) {
    const privilege: RolePrivilege = text(row, 'relation_kind') === 'S'
      ? { kind: 'sequence', action: text(row, 'action'), schema: text(row, 'schema_name'), sequence: text(row, 'relation_name') }
      : { kind: 'relation', action: text(row, 'action'), schema: text(row, 'schema_name'), relation: text(row, 'relation_name') };
    if (text(row, 'grantee') === '') {
      if (privilege.kind === 'relation') publicPrivileges.push(privilege);
    } else {
      privileges.push({ role: text(row, 'grantee'), privilege });
    }
  }
  for (const row of routineAcl) {
    const privilege: RolePrivilege = {
      kind: 'routine', action: text(row, 'action'), schema: text(row, 'schema_name'), routine: text(row, 'routine_name'), arguments: text(row, 'arguments'),
    };
    if (text(row, 'grantee') === '') publicPrivileges.push(privilege);
    else privileges.push({ role: text(row, 'grantee'), privilege });
  }
  for (const row of columnAcl) {
    privileges.push({
      role: text(row, 'grantee'),
      privilege: { kind: 'column', action: text(row, 'action'), schema: text(row, 'schema_name'), relation: text(row, 'relation_name'), column: text(row, 'column_name') },
    });
  }

  // serial columns: their sequence depends on the column automatically ('a'); identity sequences ('i') need no usage
  const ownedSequences = (await rows(`select n.nspname as schema_name, c.relname as relation_name, sn.nspname as sequence_schema, s.relname as sequence_name
from pg_catalog.pg_depend d
join pg_catalog.pg_class s on s.oid = d.objid and s.relkind = 'S'
join pg_catalog.pg_namespace sn on sn.oid = s.relnamespace
join pg_catalog.pg_class c on c.oid = d.refobjid
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
where d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
  and d.deptype = 'a' and n.nspname ${inSchemas}`, schemas)).map((row) => ({
    schema: text(row, 'schema_name'), relation: text(row, 'relation_name'), sequenceSchema: text(row, 'sequence_schema'), sequence: text(row, 'sequence_name'),
  }));

  // SET ROLE needs membership (PostgreSQL 16: membership WITH SET); a superuser may become any role
  const [login] = await rows(`select session_user::text as name, r.rolsuper as superuser
from pg_catalog.pg_roles r where r.rolname = session_user`, []);
  const canBecome = (await rows(`select r.rolname from pg_catalog.pg_roles r
where r.rolname ${inRoles} and case when pg_catalog.current_setting('server_version_num')::integer >= 160000
  then pg_catalog.pg_has_role(session_user, r.oid, 'SET') else pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER') end`, roles))
    .map((row) => text(row, 'rolname'));

  return {
    existing,
    memberships,
    privileges,
    publicPrivileges,
    ownedSequences,
    routines,
    marked,
    login: { name: login ? text(login, 'name') : '', superuser: login?.['superuser'] === true, canBecome },
  };
}

/**
 * How the sync marks the roles it creates (a comment on the role, followed by the VDB's name): only a role
 * so marked is ever dropped, never one the operator made, even of the same name.
 */
const ROLE_MARK = 'vdb-service data role of VDB ';

/** The statements of one change; `quote` is the dialect's `quoteIdentifier`. */
export function postgresRoleChangeSql(change: RoleChange, quote: (name: string) => string): string[] {
  switch (change.kind) {
    case 'create':
      return [
        `create role ${quote(change.role)} nologin ${change.inherit ? 'inherit' : 'noinherit'}`,
        `comment on role ${quote(change.role)} is '${`${ROLE_MARK}${change.vdb}`.replaceAll("'", "''")}'`,
      ];
    case 'drop':
      return [`drop role ${quote(change.role)}`];
    case 'grantMembership':
      return [`grant ${quote(change.memberOf)} to ${quote(change.role)}`];
    case 'revokeMembership':
      return [`revoke ${quote(change.memberOf)} from ${quote(change.role)}`];
    case 'grant':
      return [`grant ${privilegeOn(change.privilege, quote)} to ${quote(change.role)}`];
    case 'revoke':
      return [`revoke ${privilegeOn(change.privilege, quote)} from ${quote(change.role)}`];
  }
}

/** `select ("email") on table "sales"."customers"`. */
function privilegeOn(privilege: RolePrivilege, quote: (name: string) => string): string {
  // the action is a keyword, never quoted: only the privilege names PostgreSQL reports are written
  if (!/^[a-z]+$/.test(privilege.action)) throw new Error(`not a privilege: ${privilege.action}`);
  switch (privilege.kind) {
    case 'schema':
      return `${privilege.action} on schema ${quote(privilege.schema)}`;
    case 'relation':
      return `${privilege.action} on table ${quote(privilege.schema)}.${quote(privilege.relation)}`;
    case 'column':
      return `${privilege.action} (${quote(privilege.column)}) on table ${quote(privilege.schema)}.${quote(privilege.relation)}`;
    case 'sequence':
      return `${privilege.action} on sequence ${quote(privilege.schema)}.${quote(privilege.sequence)}`;
    case 'routine':
      // the identity arguments as pg_get_function_identity_arguments wrote them, names and types quoted by the server
      return `${privilege.action} on routine ${quote(privilege.schema)}.${quote(privilege.routine)}(${privilege.arguments ?? ''})`;
  }
}
