/**
 * The caller's data grants on one VDB (`dataRoles`, docs/authorization.md) and the check every SQL path uses:
 * the SQL authorizer for text it parses, actions for the statements they build themselves.
 */
import type { Principal } from '../plugin-api/auth-scheme.js';
import type { AccessLevel } from '../plugin-api/task-documents.js';
import type { DataAction, DataGrant, VirtualDatabase } from '../plugin-api/vdb.js';

export interface CallerGrants {
  readonly access: AccessLevel;
  /** Names of the VDB's data roles that matched the caller's roles. */
  readonly roles: readonly string[];
  /** The union of those roles' grants, as written in the VDB file. */
  readonly grants: readonly DataGrant[];
}

/** What a check is about: a relation (or a function: it is granted like a relation) and the columns used. */
export interface AccessTarget {
  schema: string;
  relation: string;
  /** The columns read or written; absent or empty asks about the relation as a whole. */
  columns?: readonly string[];
}

export type AccessCheck =
  | { allowed: true }
  | {
    allowed: false;
    /** The relation or column refused, e.g. `sales.customers.email`. */
    resource: string;
    reason: string;
  };

const COMPLETE: CallerGrants = Object.freeze({ access: 'complete', roles: [], grants: [] });
const UNAVAILABLE: CallerGrants = Object.freeze({ access: 'unavailable', roles: [], grants: [] });
const ALLOWED: AccessCheck = Object.freeze({ allowed: true });

/** Matched per VDB and role set once: requests of the same caller reuse the object and its index. */
const grantsByVdb = new WeakMap<VirtualDatabase, Map<string, CallerGrants>>();

/** By principal, where a scheme hands the same frozen principal to every request of a credential. */
const grantsByPrincipal = new WeakMap<VirtualDatabase, WeakMap<Principal, CallerGrants>>();

/** The caller's grants on `vdb`, from the principal's roles only (never from a request body). */
export function effectiveGrants(vdb: VirtualDatabase, principal: Principal): CallerGrants {
  if (!Object.isFrozen(principal) || !Object.isFrozen(principal.roles)) return matchGrants(vdb, principal);
  let byPrincipal = grantsByPrincipal.get(vdb);
  if (!byPrincipal) grantsByPrincipal.set(vdb, (byPrincipal = new WeakMap()));
  let grants = byPrincipal.get(principal);
  if (!grants) byPrincipal.set(principal, (grants = matchGrants(vdb, principal)));
  return grants;
}

function matchGrants(vdb: VirtualDatabase, principal: Principal): CallerGrants {
  if (vdb.dataRoles === undefined) return COMPLETE;
  const matched = vdb.dataRoles.filter((role) => principal.roles.includes(role.name));
  if (matched.length === 0) return UNAVAILABLE;
  let byRoles = grantsByVdb.get(vdb);
  if (!byRoles) grantsByVdb.set(vdb, (byRoles = new Map()));
  const key = matched.map((role) => role.name).join('\n');
  let grants = byRoles.get(key);
  if (!grants) {
    grants = Object.freeze({
      access: 'restricted',
      roles: matched.map((role) => role.name),
      grants: matched.flatMap((role) => role.grants),
    });
    byRoles.set(key, grants);
  }
  return grants;
}

/**
 * Whether the grants allow `action` on the target. Without columns, any grant of that action touching the
 * relation is enough (PostgreSQL asks the same for `count(*)`), except delete, which removes whole rows and
 * needs a grant on the whole relation. With columns, each column must be covered.
 */
export function allows(grants: CallerGrants, action: DataAction, target: AccessTarget): AccessCheck {
  if (grants.access === 'complete') return ALLOWED;
  const relationName = `${target.schema}.${target.relation}`;
  if (grants.access === 'unavailable') return refused(relationName, 'the caller has no data role on this VDB');
  const index = indexOf(grants);
  const coverages = [index.bySchema.get(target.schema), index.byRelation.get(relationKey(target.schema, target.relation))]
    .filter((coverage): coverage is Coverage => coverage !== undefined);
  if (coverages.some((coverage) => coverage.whole.has(action))) return ALLOWED;
  const partly = coverages.some((coverage) => coverage.someColumns.has(action));
  if (!partly) return refused(relationName, `${action} on ${relationName} is not granted`);
  if (action === 'delete') return refused(relationName, `delete on ${relationName} needs a grant on the whole relation, not on some columns`);
  for (const column of target.columns ?? []) {
    if (!coverages.some((coverage) => coverage.columns.get(column)?.has(action))) {
      return refused(`${relationName}.${column}`, `${action} on column ${column} of ${relationName} is not granted`);
    }
  }
  return ALLOWED;
}

function refused(resource: string, reason: string): AccessCheck {
  return { allowed: false, resource, reason };
}

/** What the grants cover on one schema or one relation. */
interface Coverage {
  /** Actions granted on every column. */
  whole: Set<DataAction>;
  /** Actions granted per column, for column-restricted grants. */
  columns: Map<string, Set<DataAction>>;
  /** Actions granted on at least one column. */
  someColumns: Set<DataAction>;
}

interface GrantIndex {
  bySchema: Map<string, Coverage>;
  byRelation: Map<string, Coverage>;
}

const indexes = new WeakMap<CallerGrants, GrantIndex>();

function indexOf(grants: CallerGrants): GrantIndex {
  let index = indexes.get(grants);
  if (!index) indexes.set(grants, (index = buildIndex(grants.grants)));
  return index;
}

function buildIndex(grants: readonly DataGrant[]): GrantIndex {
  const index: GrantIndex = { bySchema: new Map(), byRelation: new Map() };
  for (const grant of grants) {
    const parts = grant.resource.split('.');
    // A resource of another shape grants nothing: fail closed rather than guess what was meant.
    if (parts.length > 3 || parts.some((part) => part === '')) continue;
    const [schema, relation, column] = parts as [string, string?, string?];
    const coverage = relation === undefined
      ? coverageIn(index.bySchema, schema)
      : coverageIn(index.byRelation, relationKey(schema, relation));
    const columns = column === undefined ? grant.columns : [column].filter((name) => grant.columns?.includes(name) ?? true);
    for (const action of grant.allow) {
      if (columns === undefined) {
        coverage.whole.add(action);
        continue;
      }
      for (const name of columns) {
        let actions = coverage.columns.get(name);
        if (!actions) coverage.columns.set(name, (actions = new Set()));
        actions.add(action);
        coverage.someColumns.add(action);
      }
    }
  }
  return index;
}

function coverageIn(map: Map<string, Coverage>, key: string): Coverage {
  let coverage = map.get(key);
  if (!coverage) map.set(key, (coverage = { whole: new Set(), columns: new Map(), someColumns: new Set() }));
  return coverage;
}

function relationKey(schema: string, relation: string): string {
  return `${schema}\u0000${relation}`;
}
