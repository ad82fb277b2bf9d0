import type { Request } from 'restify';
import type { Principal } from '../plugin-api/auth-scheme.js';
import { AuthenticationError } from '../plugin-api/errors.js';

/** Principals live beside the request, not on it, so no body or header parser can ever set one. */
const principals = new WeakMap<Request, Principal>();

export function setCaller(req: Request, principal: Principal): void {
  principals.set(req, principal);
}

/** The authenticated caller of this request; the only way handlers learn who calls. */
export function callerOf(req: Request): Principal {
  const principal = principals.get(req);
  if (!principal) throw new AuthenticationError('unauthenticated', 'no authenticated caller');
  return principal;
}
