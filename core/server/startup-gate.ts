import type { Next, Request, RequestHandler, Response } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import { UnavailableError } from '../plugin-api/errors.js';
import { coreTokens } from '../service-tokens.js';
import type { RouteModule } from './route-module.js';

/** What a blocked process still serves: health, and the admin API to diagnose the failure. */
const OPEN_WHILE_BLOCKED = [/^\/observe\/health\/?$/, /^\/api\/v1\/admin(\/|$)/];

/**
 * A restify `pre` handler: when a semantic failure under policy blockStartup exists, every route but
 * health and the admin API answers 503 `startup_blocked`. It runs before routing and authentication, so
 * the answer names no VDB.
 */
export function startupGate(container: DependencyContainer): RequestHandler {
  const blocked = startupBlocked(container);
  return (req: Request, _res: Response, next: Next) => {
    if (!blocked() || OPEN_WHILE_BLOCKED.some((open) => open.test(req.path()))) {
      next();
      return;
    }
    next(new UnavailableError('startup_blocked',
      'the service did not start: a semantic model whose policy is blockStartup failed to activate; see GET /api/v1/admin/semantic/vdbs'));
  };
}

/**
 * Whether the gate is closed. A route served before restify's `pre` handlers (`serveFirst`) asks it and
 * leaves a blocked start's requests to the gate.
 */
export function startupBlocked(container: DependencyContainer): () => boolean {
  // resolved once it is registered (after activation), not on every request
  let semantic: { readonly startupBlocked: boolean } | undefined;
  return () => {
    if (semantic === undefined && container.isRegistered(coreTokens.semantic, true)) semantic = container.resolve(coreTokens.semantic);
    return semantic?.startupBlocked === true;
  };
}

/** Installs the gate on every listener; list it in route-modules.ts like any route group. */
export const startupGateRoutes: RouteModule = {
  name: 'startup-gate',
  listener: 'every',
  register(server, container) {
    server.pre(startupGate(container));
  },
};
