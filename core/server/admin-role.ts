import type { Request, RequestHandler } from 'restify';
import { ForbiddenError } from '../plugin-api/errors.js';
import { callerOf } from './request-context.js';

/**
 * Refuses (403 `forbidden`) a caller with no role of `auth.adminRoles`; goes after `authenticate`. Shared
 * by the routes for operators only: the semantic admin API, and the metrics when `observe.metrics.auth` is `admin`.
 */
export function requireAdminRole(adminRoles: readonly string[], refusal: string): RequestHandler {
  const roles = new Set(adminRoles);
  return async (req: Request) => {
    if (!callerOf(req).roles.some((role) => roles.has(role))) throw new ForbiddenError('forbidden', refusal);
  };
}
