import type { IncomingHttpHeaders } from 'node:http';
import { CredentialError } from './auth-scheme.js';

/** The `WWW-Authenticate` challenge of every scheme that reads bearer tokens. */
export const BEARER_CHALLENGE = 'Bearer realm="vdb-service"';

/** RFC 6750 `Bearer <b64token>`; the scheme name is case-insensitive (RFC 9110 §11.1). */
const BEARER_HEADER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/**
 * The token of an `Authorization: Bearer <token>` header. Shared by every scheme that reads bearer tokens
 * (static tokens, JWT), so they refuse the same headers with the same reasons.
 */
export function readBearerToken(headers: IncomingHttpHeaders): string {
  const header = headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw new CredentialError('credentials_missing', 'no credentials: send "Authorization: Bearer <token>"');
  }
  const match = BEARER_HEADER.exec(header);
  if (!match) throw new CredentialError('credentials_malformed', 'the Authorization header is not "Bearer <token>"');
  return match[1] as string;
}
