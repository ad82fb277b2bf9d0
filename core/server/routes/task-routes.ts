import type { Request, Response } from 'restify';
import { coreTokens } from '../../service-tokens.js';
import { authenticate } from '../authentication.js';
import { readBody } from '../body-parsing.js';
import { answersIn, callerOf } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/** No answer of the Task API, an error included, may be cached: each is one caller's task. */
async function noStore(_req: Request, res: Response): Promise<void> {
  res.header('Cache-Control', 'no-store');
}

/**
 * The Task API (docs/tasks.md): one synchronous task per call, on the versioned route or on the
 * versionless one. Every answer is JSON with `Cache-Control: no-store`; errors, authentication and body
 * ones included, answer in the task error envelope, where the catalog gives some their Task API spelling.
 */
export const taskRoutes: RouteModule = {
  name: 'tasks',
  listener: 'main',
  register(server, container) {
    const tasks = container.resolve(coreTokens.tasks);
    const auth = authenticate(container.resolve(coreTokens.authScheme));
    const { maxBodyBytes } = container.resolve(coreTokens.config).server;

    const handle = async (req: Request, res: Response) => {
      const body = await readBody(req, maxBodyBytes);
      const params = req.params as Record<string, string | undefined>;
      const snapshot = await tasks.run({
        capability: String(params['capability']), vdb: String(params['vdb']), version: params['version'], body, caller: callerOf(req),
      });
      res.json(200, snapshot);
    };

    const chain = [answersIn('task'), noStore, auth, handle];
    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/versions/:version/tasks', ...chain);
    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/tasks', ...chain);
  },
};
