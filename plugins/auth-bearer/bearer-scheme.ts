import { hash, timingSafeEqual } from 'node:crypto';
import { CredentialError, StartupError, BEARER_CHALLENGE, readBearerToken, type AuthScheme, type AuthSchemeFactory, type Principal } from '../../core/plugin-api/index.js';

/** One entry of `auth.tokens`: the token itself or the hex SHA-256 of it, and who presents it. */
export interface BearerTokenEntry {
  /** The token as sent by the caller (a secret; usually `${env:...}`). */
  token?: string;
  /** Hex SHA-256 of the token, so the config file need not hold the secret. */
  sha256?: string;
  subject: string;
  roles?: string[];
}

/** The `auth` section for `scheme: bearer`, without `scheme` and `adminRoles`. */
export interface BearerConfig {
  tokens: BearerTokenEntry[];
}

interface KnownToken {
  digest: Buffer;
  /** Frozen and shared by every request presenting the token: the core may cache by its identity. */
  principal: Principal;
}

/** One-shot hashing: half the cost of a Hash object for a token (every request hashes the one it presents). */
function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** The first 8 bytes of a digest: the Map key that finds the one candidate for a presented token. */
function selector(digest: Buffer): string {
  return digest.subarray(0, 8).toString('hex');
}

function knownTokens(config: BearerConfig, id: string): Map<string, KnownToken> {
  const known = new Map<string, KnownToken & { index: number }>();
  config.tokens.forEach((entry, index) => {
    // The core's schema check reports only branch errors of a oneOf, so "both given" must be caught here.
    if ((entry.token === undefined) === (entry.sha256 === undefined)) {
      throw new StartupError(`auth.tokens[${index}]: give exactly one of token and sha256`);
    }
    const digest = entry.token === undefined ? Buffer.from(entry.sha256 as string, 'hex') : sha256(entry.token);
    const key = selector(digest);
    const twin = known.get(key);
    if (twin) throw new StartupError(`auth.tokens[${index}]: the same token is already configured in auth.tokens[${twin.index}]`);
    const principal: Principal = Object.freeze({ subject: entry.subject, roles: Object.freeze([...(entry.roles ?? [])]) as string[], scheme: id });
    known.set(key, { digest, principal, index });
  });
  return known;
}

/**
 * Static bearer tokens from the config. The presented token is hashed and looked up by digest, so the
 * cost does not depend on how many tokens are configured, and the digest is compared in constant time.
 */
export function bearerSchemeFactory(id: string): AuthSchemeFactory {
  return {
    id,
    async create(config): Promise<AuthScheme> {
      const known = knownTokens(config as unknown as BearerConfig, id);
      return {
        challenge: BEARER_CHALLENGE,
        async authenticate(headers): Promise<Principal> {
          const digest = sha256(readBearerToken(headers));
          const candidate = known.get(selector(digest));
          if (!candidate || !timingSafeEqual(candidate.digest, digest)) {
            throw new CredentialError('token_unknown', 'the bearer token is not known');
          }
          return candidate.principal;
        },
      };
    },
  };
}
