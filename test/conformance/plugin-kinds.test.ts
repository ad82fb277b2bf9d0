import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  authSchemeConformance, runConformance, runtimeTransportConformance, semanticProviderConformance, templateEngineConformance,
  type ConformanceCase,
} from '../../core/conformance/index.js';
import type { ModuleRequest } from '../../core/plugin-api/semantic-provider.js';
import { startReferenceRuntimeServer } from '../../plugins/runtime-reference/standalone.js';
import { refOf, retailContext, startDocument } from '../plugins/runtime-reference/reference-fixtures.js';
import { serveFolder } from '../support/fixture-server.js';
import { postgresDialect, vdbFromFile } from '../support/semantic-test-support.js';
import { demoDescriptors } from '../support/test-service.js';

// Each suite runs against the built plugin folders, loaded through the service's loader as an author's would be.
const plugin = (folder: string) => fileURLToPath(new URL(`../../plugins/${folder}/`, import.meta.url));

/** Registers each case of a conformance suite as a test of its own. */
function register(name: string, cases: readonly ConformanceCase[], teardown?: () => Promise<void>): void {
  const tests = suite(`conformance: ${name}`);
  tests('the suite has its cases', () => assert.ok(cases.length >= 5, `${cases.length} cases`));
  for (const check of cases) tests(check.name, check.run);
  if (teardown) tests.after(teardown);
  tests.run();
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const OPS = 'ops-token-0123456789abcdef';
const CI = 'ci-token-fedcba9876543210';

register('authScheme bearer', authSchemeConformance({
  plugin: plugin('auth-bearer'),
  settings: { tokens: [{ token: OPS, subject: 'ops', roles: ['admin'] }, { sha256: createHash('sha256').update(CI).digest('hex'), subject: 'ci', roles: ['analyst', 'clerk'] }] },
  accepted: [{ headers: bearer(OPS), subject: 'ops', roles: ['admin'] }, { headers: bearer(CI), subject: 'ci', roles: ['analyst', 'clerk'] }],
  refused: [
    { headers: bearer('unknown-token-0123456789'), reason: 'token_unknown' },
    { headers: { authorization: `Basic ${Buffer.from(`ops:${OPS}`).toString('base64')}` }, reason: 'credentials_malformed' },
  ],
}));

const SECRET = 'a-shared-secret-of-at-least-32-characters';
const sign = (claims: Record<string, unknown>, secret = SECRET) => new SignJWT({ iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 300, ...claims })
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));

register('authScheme jwt', authSchemeConformance({
  plugin: plugin('auth-jwt'),
  settings: { secret: SECRET },
  accepted: [{ headers: bearer(await sign({ sub: 'alice', roles: ['analyst'] })), subject: 'alice', roles: ['analyst'] }],
  refused: [
    { headers: bearer(await sign({ sub: 'alice', roles: ['analyst'] }, 'another-secret-of-at-least-32-characters')), reason: 'signature_invalid' },
    { headers: bearer(await sign({ sub: 'alice', exp: Math.floor(Date.now() / 1000) - 600 })), reason: 'token_expired' },
  ],
}));

register('templateEngine twing', templateEngineConformance({ plugin: plugin('template-twing') }));

const retailVdb = () => vdbFromFile(join(demoDescriptors, 'vdbs', 'retail-1.yaml'));
const moduleRequest = (uri: string): ModuleRequest => ({
  uri, mediaType: 'application/vnd.vdb.semantic-module+yaml', descriptors: demoDescriptors, vdb: retailVdb(), dialectOf: () => postgresDialect,
});

register('semanticProvider bundle', semanticProviderConformance({
  plugin: plugin('semantic-bundle'),
  request: moduleRequest('semantic/retail'),
  refused: moduleRequest('../outside-the-bundle'),
}));

register('semanticProvider catalog', semanticProviderConformance({
  plugin: plugin('semantic-catalog'),
  request: moduleRequest('catalog:'),
  refused: moduleRequest('catalog:no_such_schema'),
}));

const modules = await serveFolder(join(demoDescriptors, 'semantic'));
register('semanticProvider http', semanticProviderConformance({
  plugin: plugin('semantic-http'),
  config: { timeoutMs: 1000, retries: 0 },
  request: moduleRequest(`${modules.url}/retail/`),
  refused: moduleRequest('ftp://example.com/retail/'),
}), () => modules.close());

const retail = await retailContext();
const inProcessRef = refOf('conformance-inprocess');
register('runtimeTransport inProcess', runtimeTransportConformance({
  plugin: plugin('runtime-reference'),
  settings: { baseURL: undefined, timeoutMs: 1000, bearerToken: undefined },
  task: { ref: inProcessRef, document: startDocument(inProcessRef, 'revenue by region', retail) },
}));

const RUNTIME_TOKEN = 'runtime-token-0123456789';
const runtimeServer = await startReferenceRuntimeServer({ host: '127.0.0.1', port: 0, bearerToken: RUNTIME_TOKEN });
const httpRef = refOf('conformance-http');
register('runtimeTransport http', runtimeTransportConformance({
  plugin: plugin('runtime-http'),
  settings: { baseURL: runtimeServer.url, timeoutMs: 2000, bearerToken: RUNTIME_TOKEN },
  task: { ref: httpRef, document: startDocument(httpRef, 'revenue by region', retail) },
  // Nothing listens on the discard port: every attempt is refused at once.
  unreachable: { baseURL: 'http://127.0.0.1:9', timeoutMs: 300, bearerToken: RUNTIME_TOKEN },
}), () => runtimeServer.close());

// The suites can fail: plugins that break their contract are caught, each by the case that names the breach.
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/plugins/${name}/`, import.meta.url));
const failing = suite('conformance: a plugin that breaks its contract fails the cases naming the breach');

failing('an auth scheme quoting the refused token and calling a missing header unknown', async () => {
  const failures = await runConformance(authSchemeConformance({
    plugin: fixture('leaky-auth'),
    settings: { token: OPS },
    accepted: [{ headers: bearer(OPS), subject: 'ops', roles: ['admin'] }],
    refused: [{ headers: bearer('unknown-token-0123456789'), reason: 'token_unknown' }],
  }));
  assert.equal(failures.map((failure) => failure.name), [
    'a request without credentials is refused as credentials_missing',
    'refused credentials are CredentialErrors with their reason, never quoting the credential',
  ]);
});

failing('a template engine splicing request values into the text', async () => {
  const failures = await runConformance(templateEngineConformance({ plugin: fixture('splicing-engine') }));
  const names = failures.map((failure) => failure.name);
  assert.ok(names.includes('a printed request value becomes a placeholder token, never text, and its value is captured'), names.join('; '));
  assert.ok(names.includes('an absent variable renders as a captured null'), names.join('; '));
  assert.ok(!names.includes('loads through the service loader as a templateEngine under its manifest id'));
});

failing.run();
