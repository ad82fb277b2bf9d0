import restify, { type Request, type Response } from 'restify';
import { CredentialError } from '../../auth/auth-contract.js';
import { AuthenticationError, InputError, PayloadTooLargeError, ServiceError } from '../../errors.js';
import type { TaskErrorEnvelope } from '../../tasks/task-documents.js';
import { coreTokens } from '../../tokens.js';
import { parseBody } from '../body-parsing.js';
import { toHttpFailure } from '../http-errors.js';
import { setCaller } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/** 503s a client may retry: the runtime or the data is down for now. A disabled runtime stays disabled. */
const RETRYABLE = new Set(['runtime_unavailable', 'context_unavailable']);

/**
 * The Task API (spec "Task API", DESIGN.md §6): one synchronous task per call, on the versioned route or on
 * the versionless one. Every answer is JSON with `Cache-Control: no-store`, errors in the task error
 * envelope; authentication and the body are handled here so that their errors get the envelope too.
 */
export const taskRoutes: RouteModule = {
  name: 'tasks',
  listener: 'main',
  register(server, container) {
    const tasks = container.resolve(coreTokens.tasks);
    const scheme = container.resolve(coreTokens.authScheme);
    const readBody = restify.plugins.bodyReader({ maxBodySize: container.resolve(coreTokens.config).server.maxBodyBytes });

    const handle = async (req: Request, res: Response) => {
      res.header('Cache-Control', 'no-store');
      try {
        const caller = await authenticated(req, res);
        setCaller(req, caller);
        const body = await requestBody(req, res);
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

    /** restify's reader enforces `server.maxBodyBytes`; the task request is JSON. */
    const requestBody = (req: Request, res: Response) => new Promise<unknown>((resolve, reject) => {
      readBody(req, res, (error?: unknown) => {
        if (error) {
          const status = (error as { statusCode?: unknown }).statusCode;
          reject(status === 413 ? new PayloadTooLargeError('request_too_large', 'the task request is larger than server.maxBodyBytes') : error);
          return;
        }
        try {
          resolve(parseBody(req.headers['content-type'] ?? 'application/json', req.body as Buffer | string | undefined));
        } catch (parseError) {
          reject(parseError instanceof ServiceError ? new InputError('invalid_request', parseError.message) : parseError);
        }
      });
    });

    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/versions/:version/tasks', handle);
    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/tasks', handle);
  },
};
