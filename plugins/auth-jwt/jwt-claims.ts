import type { JWTPayload } from 'jose';
import { CredentialError, type Principal } from '../../core/plugin-api/index.js';

/** Which claims name the caller; `auth.claims` in service.yaml. */
export interface ClaimNames {
  /** Claim holding the subject, default `sub`. */
  subject: string;
  /** Claim holding the roles, default `roles`; a dotted path such as `realm_access.roles` reaches into objects. */
  roles: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value at a claim path. A top-level claim whose name holds dots (`https://example.com/roles`, as
 * Auth0 namespaces them) wins over the dotted reading.
 */
export function claimAt(payload: JWTPayload, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  return path.split('.').reduce<unknown>((value, key) => (isRecord(value) && Object.hasOwn(value, key) ? value[key] : undefined), payload);
}

/** Roles from an array of strings or a space-separated string (as OAuth `scope` is); absent means none. */
function rolesOf(value: unknown, claim: string): string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return value.split(' ').filter((role) => role !== '');
  if (Array.isArray(value) && value.every((role) => typeof role === 'string')) return [...value];
  throw new CredentialError('claim_invalid', `the "${claim}" claim must be an array of strings or a space-separated string`);
}

export function principalOf(payload: JWTPayload, claims: ClaimNames, scheme: string): Principal {
  const subject = claimAt(payload, claims.subject);
  if (typeof subject !== 'string' || subject === '') {
    throw new CredentialError('claim_invalid', `the "${claims.subject}" claim must name the caller`);
  }
  return { subject, roles: rolesOf(claimAt(payload, claims.roles), claims.roles), scheme };
}
