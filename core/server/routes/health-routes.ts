import type { Request, Response } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import { INITIALIZING_HEALTH } from '../../semantic/semantic-registry.js';
import type { SemanticHealth } from '../../semantic/semantic-types.js';
import { coreTokens } from '../../service-tokens.js';
import type { RouteModule } from '../route-module.js';

/** Availabilities that make the service DOWN (503); every other one is UP (200). */
const DOWN: ReadonlySet<SemanticHealth['semanticAvailability']> = new Set(['initializing', 'unavailable']);

/** The semantic section: `initializing` until semantic activation has registered its registry. */
function semanticHealth(container: DependencyContainer): SemanticHealth {
  return container.isRegistered(coreTokens.semantic, true) ? container.resolve(coreTokens.semantic).health() : INITIALIZING_HEALTH;
}

/**
 * `GET|HEAD /observe/health`: no authentication and no VDB names, only counts. 200 `UP`, or 503 `DOWN`
 * while initializing or when a semantic failure blocks startup (docs/semantic.md).
 */
export const healthRoutes: RouteModule = {
  name: 'health',
  listener: 'every',
  register(server, container) {
    const report = async (_req: Request, res: Response) => {
      const semantic = semanticHealth(container);
      const down = DOWN.has(semantic.semanticAvailability);
      res.header('Cache-Control', 'no-store');
      res.json(down ? 503 : 200, { status: down ? 'DOWN' : 'UP', semantic });
    };
    server.get('/observe/health', report);
    server.head('/observe/health', report);
  },
};
