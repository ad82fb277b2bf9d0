/**
 * The second gate (docs/governed-execution.md): every statement run for a caller runs as the database role
 * of the caller's grants, so the database refuses what the grants do not cover even when the SQL analyzer,
 * the first gate, let it through. This file picks that role; the runtime seam (`DatasourceRuntime.forCaller`)
 * runs the statements under it.
 */
import { deny, denialError } from '../plugin-api/denial.js';
import type { ExecutionScope, SqlDialect } from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import type { CallerGrants } from './grants.js';
import { callerRole } from './role-plan.js';

/** One scope object per role and mode: adapters may keep what they set up for a scope by its identity. */
const scopes = new Map<string, { readOnly: ExecutionScope; readWrite: ExecutionScope }>();

/**
 * The scope a caller's statements on a datasource of `dialect` run under: the database role of their grants
 * on `vdb`, read-only where the route only reads. Undefined where the dialect's database does not enforce
 * roles yet (`capabilities.enforcesRoles` false): they run as the service's login, the analyzer being the
 * only gate.
 * @throws ForbiddenError when no database role stands for the grants: no data role of the VDB, or several
 *   of a VDB with too many to combine.
 */
export function callerScope(dialect: SqlDialect, vdb: VirtualDatabase, grants: CallerGrants, readOnly: boolean): ExecutionScope | undefined {
  if (!dialect.capabilities.enforcesRoles) return undefined;
  const role = callerRole(vdb, grants, dialect.maxRoleNameBytes);
  if (role === undefined) {
    const reason = grants.access === 'unavailable'
      ? 'the caller has no data role on this VDB'
      : `the caller holds ${grants.roles.length} data roles of VDB ${vdb.name}, which has too many to combine in one database role`;
    throw denialError(deny('forbidden', reason));
  }
  let pair = scopes.get(role);
  if (!pair) scopes.set(role, (pair = { readOnly: Object.freeze({ role, readOnly: true }), readWrite: Object.freeze({ role, readOnly: false }) }));
  return readOnly ? pair.readOnly : pair.readWrite;
}
