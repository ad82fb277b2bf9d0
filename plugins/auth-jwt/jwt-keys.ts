import { createPublicKey, X509Certificate, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createLocalJWKSet, type JWK, type JWTVerifyGetKey, type KeyInput } from 'jose';
import { displayPath, messageOf, StartupError } from '../../core/plugin-api/index.js';

export const JWT_ALGORITHMS = ['HS256', 'RS256', 'ES256'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** Where the key comes from: exactly one of the three. */
export interface KeySourceConfig {
  /** HS256 shared secret. */
  secret?: string;
  /** PEM public key (SPKI) or X.509 certificate, relative to the config's folder. */
  publicKeyFile?: string;
  /** A local JSON Web Key Set file, relative to the config's folder. */
  jwksFile?: string;
}

/** The key material that checks signatures, and the algorithms it is able to check. */
export interface VerificationKey {
  key: KeyInput | JWTVerifyGetKey;
  /** E.g. `['RS256']` for an RSA public key; the configured `algorithms` must be among them. */
  algorithms: JwtAlgorithm[];
  /** Names the key in startup messages, e.g. `publicKeyFile keys/jwt.pem`. */
  label: string;
}

const KEY_SOURCES = ['secret', 'publicKeyFile', 'jwksFile'] as const;

/**
 * Reads the key once, at startup. Every problem with it (a missing file, a private key, an RSA key under
 * 2048 bits) is a StartupError naming the file, so a request never meets a key jose would refuse.
 */
export async function loadVerificationKey(config: KeySourceConfig, baseDir: string): Promise<VerificationKey> {
  const given = KEY_SOURCES.filter((source) => config[source] !== undefined);
  // The core's schema check reports only branch errors of a oneOf, so "two given" must be caught here.
  if (given.length !== 1) throw new StartupError(`auth: give exactly one of ${KEY_SOURCES.join(', ')}`);
  if (config.secret !== undefined) {
    return { key: new TextEncoder().encode(config.secret), algorithms: ['HS256'], label: 'secret' };
  }
  if (config.publicKeyFile !== undefined) return loadPublicKeyFile(resolve(baseDir, config.publicKeyFile));
  return loadJwksFile(resolve(baseDir, config.jwksFile as string));
}

function keyFileError(setting: string, path: string, reason: string, cause?: unknown): StartupError {
  const file = displayPath(path);
  const message = `auth.${setting}: ${reason}`;
  return new StartupError(`${file}: ${message}`, [{ file, message }], { cause });
}

async function readKeyFile(setting: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'key file not found' : `cannot read the key file (${messageOf(error)})`;
    throw keyFileError(setting, path, reason, error);
  }
}

/** RS256 for an RSA key of at least 2048 bits (jose's floor), ES256 for an EC P-256 key. */
function algorithmOf(key: KeyObject): JwtAlgorithm | undefined {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa' && (details.modulusLength ?? 0) >= 2048) return 'RS256';
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') return 'ES256';
  return undefined;
}

const USABLE_KEYS = 'an RSA key of at least 2048 bits (RS256) or an EC P-256 key (ES256)';

async function loadPublicKeyFile(path: string): Promise<VerificationKey> {
  const text = await readKeyFile('publicKeyFile', path);
  // The service only verifies: a signing key in its config would be a secret in the wrong place.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw keyFileError('publicKeyFile', path, 'holds a private key; give the public key or certificate only');
  }
  let key: KeyObject;
  try {
    key = text.includes('-----BEGIN CERTIFICATE-----') ? new X509Certificate(text).publicKey : createPublicKey(text);
  } catch (error) {
    throw keyFileError('publicKeyFile', path, `is not a PEM public key or X.509 certificate (${messageOf(error)})`, error);
  }
  const algorithm = algorithmOf(key);
  if (!algorithm) throw keyFileError('publicKeyFile', path, `must hold ${USABLE_KEYS}`);
  return { key, algorithms: [algorithm], label: `publicKeyFile ${displayPath(path)}` };
}

/** The algorithm a JWK of the set verifies, or undefined when it is not a signature key we can use. */
function algorithmOfJwk(jwk: JWK, index: number, path: string): JwtAlgorithm | undefined {
  if (jwk.d !== undefined) throw keyFileError('jwksFile', path, `key ${index} is a private key; publish public keys only`);
  if ((jwk.kty !== 'RSA' && jwk.kty !== 'EC') || (jwk.use !== undefined && jwk.use !== 'sig')) return undefined;
  let algorithm: JwtAlgorithm | undefined;
  try {
    algorithm = algorithmOf(createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }));
  } catch (error) {
    throw keyFileError('jwksFile', path, `key ${index} is not a valid JWK (${messageOf(error)})`, error);
  }
  return jwk.alg === undefined || jwk.alg === algorithm ? algorithm : undefined;
}

async function loadJwksFile(path: string): Promise<VerificationKey> {
  const text = await readKeyFile('jwksFile', path);
  let keys: unknown;
  try {
    keys = (JSON.parse(text) as { keys?: unknown } | null)?.keys;
  } catch (error) {
    throw keyFileError('jwksFile', path, `is not JSON (${messageOf(error)})`, error);
  }
  if (!Array.isArray(keys) || !keys.every((jwk) => typeof jwk === 'object' && jwk !== null && !Array.isArray(jwk))) {
    throw keyFileError('jwksFile', path, 'is not a JSON Web Key Set: it needs a "keys" array of JWK objects');
  }
  const usable: JWK[] = [];
  const algorithms = new Set<JwtAlgorithm>();
  (keys as JWK[]).forEach((jwk, index) => {
    const algorithm = algorithmOfJwk(jwk, index, path);
    if (!algorithm) return;
    usable.push(jwk);
    algorithms.add(algorithm);
  });
  // Only usable keys go into the set: a token naming another key's kid then fails as "no matching key".
  if (usable.length === 0) throw keyFileError('jwksFile', path, `holds no signature key of a supported kind: ${USABLE_KEYS}`);
  return {
    key: createLocalJWKSet({ keys: usable }),
    algorithms: JWT_ALGORITHMS.filter((algorithm) => algorithms.has(algorithm)),
    label: `jwksFile ${displayPath(path)}`,
  };
}
