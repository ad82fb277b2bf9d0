import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { manifestProblems } from '../../../core/plugins/manifest-validation.js';
import { bearerSchemeFactory } from '../../../plugins/auth-bearer/bearer-scheme.js';
import { bearer, builtInManifest, configValidator, refusedWith, startupMessage } from '../../support/auth-test-support.js';

const OPS_TOKEN = 'ops-token-0123456789abcdef';
const CI_TOKEN = 'ci-token-fedcba9876543210';
const hex = (text: string) => createHash('sha256').update(text).digest('hex');

const factory = bearerSchemeFactory('bearer');
const scheme = await factory.create(
  {
    tokens: [
      { token: OPS_TOKEN, subject: 'ops', roles: ['admin'] },
      { sha256: hex(CI_TOKEN).toUpperCase(), subject: 'ci', roles: ['analyst', 'clerk'] },
      { token: 'no-roles-token-0123456789', subject: 'guest' },
    ],
  },
  '/nowhere',
);

test('a configured token yields its principal', async () => {
  assert.equal(await scheme.authenticate(bearer(OPS_TOKEN)), { subject: 'ops', roles: ['admin'], scheme: 'bearer' });
});

test('a token configured by its sha256 (any hex case) yields its principal', async () => {
  assert.equal(await scheme.authenticate(bearer(CI_TOKEN)), { subject: 'ci', roles: ['analyst', 'clerk'], scheme: 'bearer' });
});

test('an entry without roles gives a principal without roles', async () => {
  assert.equal((await scheme.authenticate(bearer('no-roles-token-0123456789'))).roles, []);
});

test('the scheme name is case-insensitive', async () => {
  assert.is((await scheme.authenticate({ authorization: `bEaReR ${OPS_TOKEN}` })).subject, 'ops');
});

test('a principal is frozen and shared: changing it throws and changes nothing', async () => {
  const principal = await scheme.authenticate(bearer(OPS_TOKEN));
  assert.throws(() => principal.roles.push('intruder'), TypeError);
  assert.throws(() => Object.assign(principal, { subject: 'intruder' }), TypeError);
  const again = await scheme.authenticate(bearer(OPS_TOKEN));
  assert.is(again, principal);
  assert.equal(again.roles, ['admin']);
});

test('no Authorization header, or an empty one, is credentials_missing', async () => {
  await refusedWith(scheme.authenticate({}), 'credentials_missing');
  await refusedWith(scheme.authenticate({ authorization: '  ' }), 'credentials_missing');
});

test('a header that is not "Bearer <token>" is credentials_malformed', async () => {
  for (const authorization of ['Basic b3BzOnNlY3JldA==', 'Bearer', 'Bearer ', `Bearer ${OPS_TOKEN} extra`, `Bearer "${OPS_TOKEN}"`, OPS_TOKEN]) {
    await refusedWith(scheme.authenticate({ authorization }), 'credentials_malformed');
  }
});

test('an unknown token is token_unknown, also one differing in a single character or given as its digest', async () => {
  await refusedWith(scheme.authenticate(bearer('unknown-token-0123456789')), 'token_unknown');
  await refusedWith(scheme.authenticate(bearer(`${OPS_TOKEN.slice(0, -1)}0`)), 'token_unknown');
  const error = await refusedWith(scheme.authenticate(bearer(hex(CI_TOKEN))), 'token_unknown');
  assert.not.match(error.message, CI_TOKEN);
});

test('the challenge is Bearer with the service realm', () => {
  assert.is(scheme.challenge, 'Bearer realm="vdb-service"');
});

test('an entry with both or neither of token and sha256 stops startup', async () => {
  const both = { token: OPS_TOKEN, sha256: hex(OPS_TOKEN), subject: 'ops' };
  assert.match(await startupMessage(factory.create({ tokens: [both] }, '/')), 'auth.tokens[0]: give exactly one of token and sha256');
  assert.match(await startupMessage(factory.create({ tokens: [{ subject: 'ops' }] }, '/')), 'exactly one of token and sha256');
});

test('the same token configured twice, also once as a digest, stops startup', async () => {
  const tokens = [{ token: OPS_TOKEN, subject: 'ops' }, { sha256: hex(OPS_TOKEN), subject: 'other' }];
  assert.match(await startupMessage(factory.create({ tokens }, '/')), 'auth.tokens[1]: the same token is already configured in auth.tokens[0]');
});

const manifest = builtInManifest('auth-bearer');
const validate = configValidator(manifest);

test('plugin.json is a valid authScheme manifest with id bearer that marks the token secret', () => {
  assert.equal(manifestProblems(manifest), []);
  assert.is(manifest.kind, 'authScheme');
  assert.is(manifest.id, 'bearer');
  const items = (manifest.configSchema as { properties: { tokens: { items: { properties: Record<string, Record<string, unknown>> } } } })
    .properties.tokens.items;
  assert.is(items.properties['token']?.['x-secret'], true);
});

test('configSchema accepts a valid auth section and fills roles with []', () => {
  const section = { tokens: [{ token: OPS_TOKEN, subject: 'ops', roles: ['admin'] }, { sha256: hex(CI_TOKEN), subject: 'ci' }] };
  assert.ok(validate(section), JSON.stringify(validate.errors));
  assert.equal(section.tokens[1], { sha256: hex(CI_TOKEN), subject: 'ci', roles: [] });
});

test('configSchema refuses invalid auth sections', () => {
  const invalid: unknown[] = [
    {},
    { tokens: [] },
    { tokens: [{ token: OPS_TOKEN }] },
    { tokens: [{ token: 'short', subject: 'ops' }] },
    { tokens: [{ token: 'has spaces in the token value', subject: 'ops' }] },
    { tokens: [{ sha256: 'abc', subject: 'ops' }] },
    { tokens: [{ token: OPS_TOKEN, sha256: hex(OPS_TOKEN), subject: 'ops' }] },
    { tokens: [{ subject: 'ops' }] },
    { tokens: [{ token: OPS_TOKEN, subject: 'ops', role: 'admin' }] },
    { tokens: [{ token: OPS_TOKEN, subject: 'ops' }], adminRoles: ['admin'] },
  ];
  for (const section of invalid) assert.not.ok(validate(section), JSON.stringify(section));
});

test.run();
