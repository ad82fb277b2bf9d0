import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions, type KeyInput } from 'jose';
import { CredentialError } from '../../core/plugin-api/index.js';

/**
 * The reason code for a jose failure. Messages are ours and name at most a claim: they reach the caller
 * (in the 401 body and `WWW-Authenticate`), so they must not echo the token.
 */
function credentialErrorOf(error: unknown): CredentialError {
  const cause = { cause: error };
  if (error instanceof errors.JWTExpired) return new CredentialError('token_expired', 'the token has expired', cause);
  if (error instanceof errors.JWTClaimValidationFailed) {
    return error.claim === 'nbf' && error.reason === 'check_failed'
      ? new CredentialError('token_not_yet_valid', 'the token is not valid yet (nbf)', cause)
      : new CredentialError('claim_invalid', `the "${error.claim}" claim is invalid`, cause);
  }
  if (
    error instanceof errors.JWSSignatureVerificationFailed
    || error instanceof errors.JWKSNoMatchingKey
    || error instanceof errors.JWKSMultipleMatchingKeys
    || error instanceof errors.JOSEAlgNotAllowed
  ) {
    return new CredentialError('signature_invalid', 'the token signature is not valid for this service', cause);
  }
  if (error instanceof errors.JOSEError) return new CredentialError('credentials_malformed', 'the token is not a well-formed JWT', cause);
  // Anything else is a fault of ours, not of the caller: let the edge answer 500.
  throw error;
}

/**
 * Several keys of a set fit a token without `kid` (a key rotation): jose hands them over and the first
 * that verifies wins.
 */
async function verifyWithEach(token: string, candidates: errors.JWKSMultipleMatchingKeys, options: JWTVerifyOptions): Promise<JWTPayload> {
  for await (const key of candidates) {
    try {
      return (await jwtVerify(token, key, options)).payload;
    } catch (error) {
      if (!(error instanceof errors.JWSSignatureVerificationFailed)) throw credentialErrorOf(error);
    }
  }
  throw credentialErrorOf(candidates);
}

/** Verifies signature and claims; every refusal is a CredentialError with its reason. */
export async function verifyJwt(token: string, key: KeyInput | JWTVerifyGetKey, options: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, key, options)).payload;
  } catch (error) {
    if (error instanceof errors.JWKSMultipleMatchingKeys) return verifyWithEach(token, error, options);
    throw credentialErrorOf(error);
  }
}
