import type { Request, RequestHandler, Response } from 'restify';
import { CredentialError, type AuthScheme } from '../plugin-api/auth-scheme.js';
import { AuthenticationError } from '../plugin-api/errors.js';
import { setCaller } from './request-context.js';

/**
 * Authenticates every request of a route through the configured scheme. A refused credential becomes a
 * 401 whose code is the scheme's reason and whose `WWW-Authenticate` carries the challenge.
 */
export function authenticate(scheme: AuthScheme): RequestHandler {
  return async (req: Request, res: Response) => {
    try {
      setCaller(req, await scheme.authenticate(req.headers));
    } catch (error) {
      if (!(error instanceof CredentialError)) throw error;
      const challenge = error.reason === 'credentials_missing'
        ? scheme.challenge
        : `${scheme.challenge}, error="invalid_token", error_description="${error.message.replaceAll('"', "'")}"`;
      res.header('WWW-Authenticate', challenge);
      throw new AuthenticationError(error.reason, error.message, { cause: error });
    }
  };
}
