import type { Request, Response } from 'restify';
import type { RouteModule } from '../route-module.js';

/**
 * `GET|HEAD /observe/health`: no authentication, no VDB names. The semantic section is added by semantic
 * activation (DESIGN.md §4).
 */
export const healthRoutes: RouteModule = {
  name: 'health',
  listener: 'every',
  register(server) {
    const report = (_req: Request, res: Response) => {
      res.header('Cache-Control', 'no-store');
      res.json(200, { status: 'UP' });
    };
    server.get('/observe/health', report);
    server.head('/observe/health', report);
  },
};
