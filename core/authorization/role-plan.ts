/**
 * The database roles that stand for a VDB's data roles (docs/governed-execution.md): their names, what each
 * holds, and the role a caller runs as. The privileges follow the grant semantics of grants.ts, so that the
 * database refuses what the SQL analyzer would: a schema, relation or column resource, `allow` actions,
 * optional `columns`; delete only on a whole relation.
 */
import { createHash } from 'node:crypto';
import type { PlannedRole, RolePrivilege } from '../plugin-api/database-roles.js';
import type { CatalogFunction } from '../plugin-api/catalog.js';
import type { DataGrant, DataRole, VdbRelation, VirtualDatabase } from '../plugin-api/vdb.js';
import type { CallerGrants } from './grants.js';

/**
 * A caller holding several data roles runs as a combination role, a member of each. Combinations are
 * created at sync, one per subset of two or more data roles, while a VDB has at most this many data roles
 * (26 combinations); with more, a caller holding several of them is refused.
 */
export const MAX_COMBINED_DATA_ROLES = 5;

/** PostgreSQL's identifier limit, the default; longer names are cut and suffixed with a hash so they stay distinct. */
const MAX_NAME_BYTES = 63;

/** The roles of one VDB on one datasource. */
export interface VdbRolePlan {
  vdb: VirtualDatabase;
  datasource: string;
  /** The VDB's schemas on that datasource. */
  schemas: string[];
  /** Data roles (or the VDB's one role) first, combination roles after the roles they are members of. */
  roles: PlannedVdbRole[];
}

export interface PlannedVdbRole extends PlannedRole {
  /** The data roles it stands for: one, several for a combination, none for a VDB without `dataRoles`. */
  dataRoles: readonly string[];
}

/**
 * The roles `vdb` needs on `datasource`; undefined when it has no relation or schema there, or an empty
 * `dataRoles` list (no caller can reach its data). Names longer than `maxNameBytes` (the dialect's
 * `maxRoleNameBytes`) are cut and hashed.
 */
export function planVdbRoles(vdb: VirtualDatabase, datasource: string, maxNameBytes = MAX_NAME_BYTES): VdbRolePlan | undefined {
  const schemas = vdb.schemas.filter((schema) => schema.datasource === datasource).map((schema) => schema.name);
  if (schemas.length === 0) return undefined;
  const relations = vdb.catalog.relations.filter((relation) => relation.datasource === datasource);
  const functions = vdb.catalog.functions.filter((fn) => schemas.includes(fn.schema));
  const usage = schemas.map((schema): RolePrivilege => ({ kind: 'schema', action: 'usage', schema }));
  const privileges = (grants: readonly DataGrant[]) => [...usage, ...relationPrivileges(grants, relations), ...routinePrivileges(grants, functions)];
  if (vdb.dataRoles === undefined) {
    const everything: DataGrant[] = schemas.map((schema) => ({ resource: schema, allow: ['select', 'insert', 'update', 'delete'] }));
    return { vdb, datasource, schemas, roles: [{ name: vdbRoleName(vdb, maxNameBytes), vdb: vdb.name, dataRoles: [], memberOf: [], privileges: privileges(everything) }] };
  }
  const dataRoles = mergedDataRoles(vdb.dataRoles);
  if (dataRoles.length === 0) return undefined;
  const singles = dataRoles.map((role): PlannedVdbRole => ({
    name: dataRoleName(vdb, role, maxNameBytes),
    vdb: vdb.name,
    dataRoles: [role.name],
    memberOf: [],
    privileges: privileges(role.grants),
  }));
  const combinations = dataRoles.length > MAX_COMBINED_DATA_ROLES ? [] : subsets(singles).map((members): PlannedVdbRole => ({
    name: combinationName(vdb, members.flatMap((member) => member.dataRoles), maxNameBytes),
    vdb: vdb.name,
    dataRoles: members.flatMap((member) => member.dataRoles),
    memberOf: members.map((member) => member.name),
    privileges: [],
  }));
  return { vdb, datasource, schemas, roles: [...singles, ...combinations] };
}

const byVdb = new WeakMap<VirtualDatabase, Map<number, string>>();
const byGrants = new WeakMap<CallerGrants, Map<number, string | undefined>>();

/**
 * The database role a caller with these grants runs as on `vdb`; undefined when none stands for them (no
 * data role, or several of a VDB with too many to combine): the caller is then refused. `maxNameBytes` as
 * for `planVdbRoles`.
 */
export function callerRole(vdb: VirtualDatabase, grants: CallerGrants, maxNameBytes = MAX_NAME_BYTES): string | undefined {
  if (grants.access === 'unavailable') return undefined;
  if (grants.access === 'complete') {
    let names = byVdb.get(vdb);
    if (!names) byVdb.set(vdb, (names = new Map()));
    let name = names.get(maxNameBytes);
    if (name === undefined) names.set(maxNameBytes, (name = vdbRoleName(vdb, maxNameBytes)));
    return name;
  }
  // grants.ts makes one object per VDB and role set: the answer is computed once per caller kind
  let answers = byGrants.get(grants);
  if (!answers) byGrants.set(grants, (answers = new Map()));
  if (answers.has(maxNameBytes)) return answers.get(maxNameBytes);
  const names = [...new Set(grants.roles)];
  const dataRoles = mergedDataRoles(vdb.dataRoles ?? []);
  let name: string | undefined;
  if (names.length === 1) {
    const role = dataRoles.find((candidate) => candidate.name === names[0]);
    name = role && dataRoleName(vdb, role, maxNameBytes);
  } else if (names.length > 1 && dataRoles.length <= MAX_COMBINED_DATA_ROLES) {
    name = combinationName(vdb, names, maxNameBytes);
  }
  answers.set(maxNameBytes, name);
  return name;
}

/** `vdb_<vdb>_v<version>`: the role of a VDB without `dataRoles`, and the prefix of its data roles' roles. */
function vdbRoleName(vdb: VirtualDatabase, maxNameBytes: number): string {
  return fitted(`vdb_${namePart(vdb.name)}_v${namePart(vdb.version)}`, maxNameBytes);
}

function dataRoleName(vdb: VirtualDatabase, role: DataRole, maxNameBytes: number): string {
  return role.dbRole ?? fitted(`vdb_${namePart(vdb.name)}_v${namePart(vdb.version)}_${namePart(role.name)}`, maxNameBytes);
}

/** `…_analyst_and_clerk`: the data roles' names in sorted order, so one role set has one name. */
function combinationName(vdb: VirtualDatabase, dataRoles: readonly string[], maxNameBytes: number): string {
  const parts = [...dataRoles].sort().map(namePart).join('_and_');
  return fitted(`vdb_${namePart(vdb.name)}_v${namePart(vdb.version)}_${parts}`, maxNameBytes);
}

/** Lower case, anything but `[a-z0-9_]` as `_`: a name no quoting can get wrong. */
function namePart(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

function fitted(name: string, maxNameBytes: number): string {
  if (Buffer.byteLength(name) <= maxNameBytes) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, maxNameBytes - hash.length - 1)}_${hash}`;
}

/** Data roles of the same name are one role: grants.ts gives a caller the union of every role matched by name. */
function mergedDataRoles(roles: readonly DataRole[]): DataRole[] {
  const merged = new Map<string, DataRole>();
  for (const role of roles) {
    const seen = merged.get(role.name);
    merged.set(role.name, seen ? { ...seen, grants: [...seen.grants, ...role.grants], dbRole: seen.dbRole ?? role.dbRole } : role);
  }
  return [...merged.values()];
}

/** Every subset of two or more, smaller ones first. */
function subsets<T>(items: readonly T[]): T[][] {
  const found: T[][] = [];
  for (let mask = 1; mask < 1 << items.length; mask++) {
    const subset = items.filter((_, index) => (mask & (1 << index)) !== 0);
    if (subset.length > 1) found.push(subset);
  }
  return found.sort((a, b) => a.length - b.length);
}

/**
 * `execute` on the VDB catalog's functions (every overload) that the grants allow as the analyzer does: a
 * function is granted like a relation of its schema, by a select grant on the schema or on `schema.function`.
 */
function routinePrivileges(grants: readonly DataGrant[], functions: readonly CatalogFunction[]): RolePrivilege[] {
  const granted = new Map<string, RolePrivilege>();
  for (const fn of functions) {
    const resource = `${fn.schema}.${fn.name}`;
    const allowed = grants.some((grant) => grant.allow.includes('select')
      && (grant.resource === fn.schema || grant.resource === resource || grant.resource.startsWith(`${resource}.`)));
    // the catalog lists a name once per return type: one privilege per name, held on every overload
    if (allowed) granted.set(`${fn.schema}\u0000${fn.name}`, { kind: 'routine', action: 'execute', schema: fn.schema, routine: fn.name });
  }
  return [...granted.values()];
}

/**
 * The relation and column privileges of a set of grants on the VDB's relations, as grants.ts reads them:
 * an action granted without columns is held on the whole relation, otherwise on the named columns the
 * relation has; delete exists only on whole relations. Grants naming something the catalog lacks (a
 * function, an excluded relation, an unknown column) hold nothing.
 */
function relationPrivileges(grants: readonly DataGrant[], relations: readonly VdbRelation[]): RolePrivilege[] {
  const privileges: RolePrivilege[] = [];
  for (const relation of relations) {
    const whole = new Set<string>();
    const columns = new Map<string, Set<string>>();
    for (const grant of grants) {
      const parts = grant.resource.split('.');
      if (parts.length > 3 || parts.some((part) => part === '')) continue;
      const [schema, name, column] = parts as [string, string?, string?];
      if (schema !== relation.schema || (name !== undefined && name !== relation.name)) continue;
      const named = column === undefined ? grant.columns : [column].filter((candidate) => grant.columns?.includes(candidate) ?? true);
      for (const action of grant.allow) {
        if (named === undefined) {
          whole.add(action);
          continue;
        }
        if (action === 'delete') continue;
        let held = columns.get(action);
        if (!held) columns.set(action, (held = new Set()));
        for (const candidate of named) if (relation.columns.some((known) => known.name === candidate)) held.add(candidate);
      }
    }
    const target = { schema: relation.schema, relation: relation.name };
    for (const action of whole) privileges.push({ kind: 'relation', action, ...target });
    for (const [action, held] of columns) {
      if (whole.has(action)) continue;
      for (const column of relation.columns) if (held.has(column.name)) privileges.push({ kind: 'column', action, ...target, column: column.name });
    }
  }
  return privileges;
}
