import type { IncomingHttpHeaders } from 'node:http';

/** The authenticated caller. Derived only from the HTTP request, never from a body. */
export interface Principal {
  /** Stable identifier of the caller, e.g. `ops` or a JWT `sub`. */
  subject: string;
  /** Role names matched against `auth.adminRoles` and VDB `dataRoles`. */
  roles: string[];
  /** The id of the scheme that authenticated the caller, e.g. `bearer`. */
  scheme: string;
}

/** What an `authScheme` plugin provides: a factory for the configured `auth` section. */
export interface AuthSchemeFactory {
  /** The plugin id, e.g. `jwt`; selected by `auth.scheme`. */
  readonly id: string;
  /**
   * Builds the scheme from the `auth` section of service.yaml (already validated against the plugin's
   * `configSchema`). `baseDir` resolves relative key files.
   */
  create(config: Record<string, unknown>, baseDir: string): Promise<AuthScheme>;
}

/** A configured scheme: authenticates each request from its headers. */
export interface AuthScheme {
  /** The `WWW-Authenticate` challenge sent with a 401, e.g. `Bearer realm="vdb-service"`. */
  readonly challenge: string;
  /**
   * Returns the caller for these request headers. Throws a `CredentialError` when credentials are
   * missing or wrong; the HTTP edge turns it into 401.
   */
  authenticate(headers: IncomingHttpHeaders): Promise<Principal>;
}

/**
 * Why credentials can be refused: the 401 codes of the error catalog, which the HTTP edge answers (the Task
 * API answers `unauthenticated` instead).
 */
export const CREDENTIAL_FAILURES = [
  'credentials_missing',
  'credentials_malformed',
  'token_unknown',
  'token_expired',
  'token_not_yet_valid',
  'signature_invalid',
  'claim_invalid',
] as const;
/** One of `CREDENTIAL_FAILURES`. */
export type CredentialFailure = (typeof CREDENTIAL_FAILURES)[number];

/** Refused credentials, with the reason; never the credential itself in the message. */
export class CredentialError extends Error {
  constructor(
    /** Which of `CREDENTIAL_FAILURES`: the code of the 401. */
    readonly reason: CredentialFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CredentialError';
  }
}
