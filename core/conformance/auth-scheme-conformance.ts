import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CREDENTIAL_FAILURES, CredentialError, type AuthScheme, type CredentialFailure } from '../plugin-api/auth-scheme.js';
import { loadContribution, type ConformanceCase, type LoadedContribution } from './conformance-case.js';

/** What the auth scheme suite runs against: a plugin folder, settings it accepts, and callers. */
export interface AuthSchemeConformanceTarget {
  /** The folder holding the plugin's plugin.json, beside its built entry. */
  plugin: string;
  /** An `auth` section for the scheme (without `scheme` and `adminRoles`), as service.yaml would give it. */
  settings: Record<string, unknown>;
  /** Where relative key files of the settings are resolved; the plugin folder when absent. */
  baseDir?: string;
  /** Requests the settings accept, each with the caller it must yield. At least one. */
  accepted: readonly { headers: IncomingHttpHeaders; subject: string; roles: readonly string[] }[];
  /** Requests the settings refuse (a wrong, expired or malformed credential), each with its reason. At least one. */
  refused: readonly { headers: IncomingHttpHeaders; reason: CredentialFailure }[];
}

async function refusal(attempt: Promise<unknown>): Promise<CredentialError> {
  try {
    await attempt;
  } catch (error) {
    assert.ok(error instanceof CredentialError, `expected a CredentialError, got ${String(error)}`);
    assert.ok((CREDENTIAL_FAILURES as readonly string[]).includes(error.reason), `reason "${error.reason}" is not a CredentialFailure`);
    return error;
  }
  return assert.fail('expected the credentials to be refused, but they were accepted');
}

/** Header values long enough to be a credential: a refusal's message must quote none of them. */
function credentialsIn(headers: IncomingHttpHeaders): string[] {
  return Object.values(headers).flat().filter((value): value is string => typeof value === 'string')
    .flatMap((value) => value.split(/\s+/)).filter((part) => part.length >= 8);
}

/**
 * The conformance suite of `authScheme` plugins: the plugin loads as the service loads it, its settings
 * satisfy its configSchema, accepted callers become their principal, every refusal is a `CredentialError`
 * with a catalogued reason that never quotes the credential, and calls are independent of each other.
 */
export function authSchemeConformance(target: AuthSchemeConformanceTarget): ConformanceCase[] {
  let loading: Promise<LoadedContribution<'authScheme'>> | undefined;
  const loaded = () => (loading ??= loadContribution('authScheme', target.plugin));
  let creating: Promise<AuthScheme> | undefined;
  const scheme = () => (creating ??= loaded().then(({ contribution }) => contribution.create(target.settings, target.baseDir ?? target.plugin)));

  return [
    { name: 'loads through the service loader as an authScheme under its manifest id', run: async () => {
      const { manifest, contribution } = await loaded();
      assert.equal(contribution.id, manifest.id);
      assert.equal(typeof contribution.create, 'function');
      assert.ok(target.accepted.length > 0 && target.refused.length > 0, 'the target names accepted and refused requests');
    } },
    { name: 'the settings satisfy the plugin configSchema, which the service checks the auth section against', run: async () => {
      const { manifest } = await loaded();
      assert.ok(manifest.configSchema, 'an authScheme declares the configSchema of its auth section');
      const validate = new Ajv2020({ allErrors: true, strict: false }).compile(manifest.configSchema);
      assert.ok(validate(structuredClone(target.settings)), `settings refused: ${JSON.stringify(validate.errors)}`);
    } },
    { name: 'the scheme has a one-line WWW-Authenticate challenge', run: async () => {
      const { challenge } = await scheme();
      assert.equal(typeof challenge, 'string');
      assert.ok(challenge.trim() !== '' && !/[\r\n]/.test(challenge), `challenge "${challenge}"`);
    } },
    { name: 'accepted credentials yield their principal, with the scheme id', run: async () => {
      const { manifest } = await loaded();
      for (const caller of target.accepted) {
        const principal = await (await scheme()).authenticate(structuredClone(caller.headers));
        assert.deepEqual({ subject: principal.subject, roles: [...principal.roles], scheme: principal.scheme },
          { subject: caller.subject, roles: [...caller.roles], scheme: manifest.id });
      }
    } },
    { name: 'a request without credentials is refused as credentials_missing', run: async () => {
      assert.equal((await refusal((await scheme()).authenticate({}))).reason, 'credentials_missing');
    } },
    { name: 'refused credentials are CredentialErrors with their reason, never quoting the credential', run: async () => {
      for (const caller of target.refused) {
        const error = await refusal((await scheme()).authenticate(structuredClone(caller.headers)));
        assert.equal(error.reason, caller.reason, `reason for ${JSON.stringify(Object.keys(caller.headers))}`);
        for (const secret of credentialsIn(caller.headers)) assert.ok(!error.message.includes(secret), `the message "${error.message}" quotes the credential`);
      }
    } },
    { name: 'authenticate reads the headers without changing them', run: async () => {
      for (const headers of [...target.accepted, ...target.refused].map((caller) => caller.headers)) {
        const given = structuredClone(headers);
        await (await scheme()).authenticate(given).catch(() => undefined);
        assert.deepEqual(given, headers);
      }
    } },
    { name: 'concurrent calls answer each for its own request', run: async () => {
      const live = await scheme();
      const calls = [...target.refused, ...target.accepted, ...target.refused, ...target.accepted];
      const outcomes = await Promise.all(calls.map((caller) => live.authenticate(structuredClone(caller.headers))
        .then((principal) => principal.subject, (error: unknown) => (error instanceof CredentialError ? `refused:${error.reason}` : 'other'))));
      assert.deepEqual(outcomes, calls.map((caller) => ('subject' in caller ? caller.subject : `refused:${caller.reason}`)));
    } },
  ];
}
