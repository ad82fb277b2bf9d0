import type { Request, RequestHandler } from 'restify';
import { CredentialError, type AuthScheme } from '../plugin-api/auth-scheme.js';
import type { ErrorCode } from '../plugin-api/error-catalog.js';
import { AuthenticationError } from '../plugin-api/errors.js';
import { setCaller } from './request-context.js';

/**
 * Credentials the scheme refused: 401 with the scheme's reason as code. It keeps the scheme's challenge
 * so that the edge can answer `WWW-Authenticate` in the flavour of the code it answers.
 */
export class CredentialRefusal extends AuthenticationError {
  constructor(private readonly challenge: string, refused: CredentialError) {
    super(refused.reason, refused.message, { cause: refused });
  }

  /**
   * RFC 6750 `error="invalid_token"` when the answer names why a credential sent was refused; bare when
   * none was sent, or when the answer is the Task API's `unauthenticated`, which names no reason.
   */
  challengeFor(answered: ErrorCode): string {
    if (answered !== this.code || answered === 'credentials_missing') return this.challenge;
    return `${this.challenge}, error="invalid_token", error_description="${this.message.replaceAll('"', "'")}"`;
  }
}

/** Authenticates every request of a route through the configured scheme; a refused credential is a 401. */
export function authenticate(scheme: AuthScheme): RequestHandler {
  // restify takes a handler of two parameters only if it is an async function
  return async (req: Request) => {
    await authenticateRequest(scheme, req);
  };
}

/**
 * Authenticates one request, as `authenticate` does, for a route that calls it first in its own handler: a
 * restify handler of its own costs a turn of the handler chain per request (the query endpoint's hot path).
 */
export async function authenticateRequest(scheme: AuthScheme, req: Request): Promise<void> {
  try {
    setCaller(req, await scheme.authenticate(req.headers));
  } catch (error) {
    if (!(error instanceof CredentialError)) throw error;
    throw new CredentialRefusal(scheme.challenge, error);
  }
}
