import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'restify';
import type { Principal } from '../plugin-api/auth-scheme.js';
import type { ErrorEnvelope } from '../plugin-api/error-catalog.js';
import { AuthenticationError } from '../plugin-api/errors.js';

/** When the request arrived, set by the listener's first hook: restify's `req.time()` exists only on its own routes. */
const STARTED = Symbol('started');
type Timed = IncomingMessage & { [STARTED]?: number };

export function markStarted(req: IncomingMessage): void {
  (req as Timed)[STARTED] = Date.now();
}

/** Milliseconds since the request arrived. */
export function elapsedMs(req: IncomingMessage): number {
  return Date.now() - ((req as Timed)[STARTED] ?? Date.now());
}

/** Principals live beside the request, not on it, so no body or header parser can ever set one. */
const principals = new WeakMap<Request, Principal>();
/** The envelope a route answers its errors in, when not the standard one. */
const envelopes = new WeakMap<Request, ErrorEnvelope>();

export function setCaller(req: Request, principal: Principal): void {
  principals.set(req, principal);
}

/** The authenticated caller of this request; the only way handlers learn who calls. */
export function callerOf(req: Request): Principal {
  const principal = principals.get(req);
  if (!principal) throw new AuthenticationError('unauthenticated');
  return principal;
}

/**
 * A route's first handler, declaring the envelope its errors answer in; put first, it covers the route's
 * authentication and body reading too. Errors before routing (no such route, startup gate) stay standard.
 */
export function answersIn(envelope: ErrorEnvelope): RequestHandler {
  return async (req: Request) => {
    envelopes.set(req, envelope);
  };
}

export function envelopeOf(req: Request): ErrorEnvelope {
  return envelopes.get(req) ?? 'standard';
}
