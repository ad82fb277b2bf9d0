import type { Request } from 'restify';
import type { Principal } from '../auth/auth-contract.js';
import { AuthenticationError } from '../errors.js';

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
