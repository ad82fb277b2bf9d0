import type { JWTVerifyOptions } from 'jose';
import { StartupError, BEARER_CHALLENGE, readBearerToken, type AuthScheme, type AuthSchemeFactory, type Principal } from '../../core/plugin-api/index.js';
import { principalOf, type ClaimNames } from './jwt-claims.js';
import { loadVerificationKey, type JwtAlgorithm, type KeySourceConfig, type VerificationKey } from './jwt-keys.js';
import { verifyJwt } from './jwt-verify.js';

/** The `auth` section for `scheme: jwt`, without `scheme` and `adminRoles`. */
export interface JwtConfig extends KeySourceConfig {
  /** Accepted `alg` values; default: every one the key can verify. */
  algorithms?: JwtAlgorithm[];
  /** Required `iss`. */
  issuer?: string;
  /** Required `aud`: the token must name one of them. */
  audience?: string | string[];
  /** Allowed clock skew for `exp` and `nbf`, default 30. */
  clockToleranceSeconds?: number;
  claims?: Partial<ClaimNames>;
}

/** Explicit algorithms must all be verifiable by the key: `HS256` with an RSA key is a config mistake. */
function allowedAlgorithms(configured: JwtAlgorithm[] | undefined, key: VerificationKey): JwtAlgorithm[] {
  if (configured === undefined) return key.algorithms;
  const unusable = configured.filter((algorithm) => !key.algorithms.includes(algorithm));
  if (unusable.length > 0) {
    throw new StartupError(`auth.algorithms: ${unusable.join(', ')} cannot be verified with ${key.label} (it verifies ${key.algorithms.join(', ')})`);
  }
  return configured;
}

/** JWTs signed with HS256 (shared secret), RS256 or ES256 (public key file or local JWKS). */
export function jwtSchemeFactory(id: string): AuthSchemeFactory {
  return {
    id,
    async create(settings, baseDir): Promise<AuthScheme> {
      const config = settings as JwtConfig;
      const key = await loadVerificationKey(config, baseDir);
      const options: JWTVerifyOptions = {
        algorithms: allowedAlgorithms(config.algorithms, key),
        issuer: config.issuer,
        audience: config.audience,
        clockTolerance: config.clockToleranceSeconds ?? 30,
      };
      const claims: ClaimNames = { subject: config.claims?.subject ?? 'sub', roles: config.claims?.roles ?? 'roles' };
      return {
        challenge: BEARER_CHALLENGE,
        async authenticate(headers): Promise<Principal> {
          const payload = await verifyJwt(readBearerToken(headers), key.key, options);
          return principalOf(payload, claims, id);
        },
      };
    },
  };
}
