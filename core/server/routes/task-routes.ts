import type { Request, Response } from 'restify';
import { CredentialError } from '../../plugin-api/auth-scheme.js';
import { AuthenticationError, InputError, PayloadTooLargeError, ServiceError } from '../../plugin-api/errors.js';
import type { TaskErrorEnvelope } from '../../plugin-api/task-documents.js';
import { coreTokens } from '../../service-tokens.js';
import { readBody } from '../body-parsing.js';
import { toHttpFailure } from '../http-errors.js';
import { setCaller } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/** 503s a client may retry: the runtime or the data is down for now. A disabled runtime stays disabled. */
const RETRYABLE = new Set(['runtime_unavailable', 'context_unavailable']);

/**
 * The Task API (docs/tasks.md): one synchronous task per call, on the versioned route or on
 * the versionless one. Every answer is JSON with `Cache-Control: no-store`, errors in the task error
 * envelope; authentication and the body are handled here so that their errors get the envelope too.
 */
export const taskRoutes: RouteModule = {
  name: 'tasks',
  listener: 'main',
  register(server, container) {
    const tasks = container.resolve(coreTokens.tasks);
    const scheme = container.resolve(coreTokens.authScheme);
    const { maxBodyBytes } = container.resolve(coreTokens.config).server;

    const handle = async (req: Request, res: Response) => {
      res.header('Cache-Control', 'no-store');
      try {
        const caller = await authenticated(req, res);
        setCaller(req, caller);
        const body = await requestBody(req);
        const params = req.params as Record<string, string | undefined>;
        const snapshot = await tasks.run({
          capability: String(params['capability']), vdb: String(params['vdb']), version: params['version'], body, caller,
        });
        res.json(200, snapshot);
      } catch (error) {
        const failure = toHttpFailure(error);
        if (failure.serverSide) req.log.error({ err: error }, 'task failed');
        const envelope: TaskErrorEnvelope = {
          format: 'service-task-error',
          formatVersion: 1,
          code: failure.body.code,
          message: failure.body.message,
          retryable: RETRYABLE.has(failure.body.code),
        };
        res.json(failure.status, envelope);
      }
    };

    const authenticated = async (req: Request, res: Response) => {
      try {
        return await scheme.authenticate(req.headers);
      } catch (error) {
        if (!(error instanceof CredentialError)) throw error;
        res.header('WWW-Authenticate', scheme.challenge);
        throw new AuthenticationError('unauthenticated', error.message, { cause: error });
      }
    };

    /** The task request is JSON; its errors are the Task API's codes. */
    const requestBody = async (req: Request): Promise<unknown> => {
      try {
        return await readBody(req, maxBodyBytes);
      } catch (error) {
        if (error instanceof PayloadTooLargeError) throw new PayloadTooLargeError('request_too_large', 'the task request is larger than server.maxBodyBytes');
        if (error instanceof ServiceError) throw new InputError('invalid_request', error.message);
        throw error;
      }
    };

    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/versions/:version/tasks', handle);
    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/tasks', handle);
  },
};
