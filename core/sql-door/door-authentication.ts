/**
 * Who connects: the password is the caller's bearer token or JWT, checked by the configured auth scheme
 * exactly as an HTTP request's `Authorization: Bearer` header is; the database names the VDB,
 * `<vdb>@<version>` or `<vdb>` when it has one version. The user name is informational.
 */
import { CredentialError, type AuthScheme, type Principal } from '../plugin-api/auth-scheme.js';
import { effectiveGrants, type CallerGrants } from '../authorization/grants.js';
import type { VdbHandle, VdbHandles } from '../vdb/vdb-handles.js';
import { WireError } from './wire-errors.js';

/** A connected caller of one VDB. */
export interface DoorCaller {
  principal: Principal;
  handle: VdbHandle;
  grants: CallerGrants;
}

/**
 * The caller of a connection, checked in the order a PostgreSQL server checks: the password (28P01), the
 * database (3D000), the right to connect to it (42501: no data role of the VDB).
 */
export async function authenticateCaller(scheme: AuthScheme, handles: VdbHandles, password: string, database: string | undefined): Promise<DoorCaller> {
  let principal: Principal;
  try {
    principal = await scheme.authenticate({ authorization: `Bearer ${password}` });
  } catch (error) {
    if (!(error instanceof CredentialError)) throw error;
    throw new WireError('28P01', `password authentication failed: ${error.message}`, `reason: ${error.reason}`, 'FATAL');
  }
  const handle = vdbHandle(handles, database);
  const grants = effectiveGrants(handle.vdb, principal);
  if (grants.access === 'unavailable') {
    throw new WireError('42501', `permission denied for database "${database}": the caller has no data role of VDB ${handle.vdb.name}`, undefined, 'FATAL');
  }
  return { principal, handle, grants };
}

/** `retail@1` → VDB retail version 1; `retail` → its only version. */
function vdbHandle(handles: VdbHandles, database: string | undefined): VdbHandle {
  if (database === undefined || database === '') {
    throw new WireError('3D000', 'no database given: connect to <vdb>@<version>, or <vdb> when it has one version', undefined, 'FATAL');
  }
  const at = database.lastIndexOf('@');
  const found = at < 0 ? handles.lookup(database, undefined) : handles.lookup(database.slice(0, at), database.slice(at + 1));
  if (typeof found === 'string') throw new WireError('3D000', `database "${database}" does not exist: ${found.replace('set virtualDatabaseVersion', 'connect to <vdb>@<version>')}`, undefined, 'FATAL');
  return found;
}
