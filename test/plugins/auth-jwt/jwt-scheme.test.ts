import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64url, CompactSign, exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { manifestProblems } from '../../../core/plugins/manifest-validation.js';
import { jwtSchemeFactory } from '../../../plugins/auth-jwt/jwt-scheme.js';
import { bearer, builtInManifest, configValidator, refusedWith, startupMessage } from '../../support/auth-test-support.js';

const factory = jwtSchemeFactory('jwt');
const SECRET = 'a-shared-secret-of-at-least-32-characters';
const now = () => Math.floor(Date.now() / 1000);

// Key material made for this run; the files live in a temp folder that stands for the config's folder.
const dir = mkdtempSync(join(tmpdir(), 'vdb-jwt-test-'));
const rsa = await generateKeyPair('RS256');
const ec = await generateKeyPair('ES256');
const otherRsa = await generateKeyPair('RS256');
const secondEc = await generateKeyPair('ES256');
const strangerEc = await generateKeyPair('ES256');
const fixture = (name: string) => new URL(`../../../../test/fixtures/auth/${name}`, import.meta.url);
const certKey = await importJWK(JSON.parse(readFileSync(fixture('x509-signing-key.jwk.json'), 'utf8')) as JWK, 'ES256');

function writeFile(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}
const publicJwk = async (key: CryptoKey, extra: JWK = {}) => ({ ...(await exportJWK(key)), ...extra });

writeFile('rsa.pem', await exportSPKI(rsa.publicKey));
writeFile('ec.pem', await exportSPKI(ec.publicKey));
writeFile('cert.pem', readFileSync(fixture('x509-cert.pem'), 'utf8'));
writeFile('jwks.json', JSON.stringify({ keys: [await publicJwk(ec.publicKey, { kid: 'ec-1' }), await publicJwk(rsa.publicKey, { kid: 'rsa-1' })] }));
writeFile('rotation.json', JSON.stringify({ keys: [await publicJwk(ec.publicKey), await publicJwk(secondEc.publicKey)] }));

/** A token with sensible claims; `claims` overrides or adds. */
async function sign(key: CryptoKey | Uint8Array, alg: string, claims: JWTPayload = {}, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ sub: 'alice', roles: ['analyst'], iat: now(), exp: now() + 300, ...claims })
    .setProtectedHeader({ alg, typ: 'JWT', ...header })
    .sign(key);
}
const secretKey = new TextEncoder().encode(SECRET);

const hsScheme = await factory.create({ secret: SECRET }, dir);
const rsScheme = await factory.create({ publicKeyFile: 'rsa.pem', issuer: 'https://idp.example', audience: ['vdb', 'vdb-admin'] }, dir);
const jwksScheme = await factory.create({ jwksFile: 'jwks.json' }, dir);

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('HS256 with the shared secret yields the principal', async () => {
  assert.equal(await hsScheme.authenticate(bearer(await sign(secretKey, 'HS256'))), { subject: 'alice', roles: ['analyst'], scheme: 'jwt' });
});

test('RS256 with an SPKI public key file, issuer and one of the audiences', async () => {
  const token = await sign(rsa.privateKey, 'RS256', { iss: 'https://idp.example', aud: 'vdb-admin' });
  assert.is((await rsScheme.authenticate(bearer(token))).subject, 'alice');
});

test('ES256 with an SPKI public key file', async () => {
  const scheme = await factory.create({ publicKeyFile: 'ec.pem' }, dir);
  assert.is((await scheme.authenticate(bearer(await sign(ec.privateKey, 'ES256')))).subject, 'alice');
});

test('ES256 with an X.509 certificate as publicKeyFile', async () => {
  const scheme = await factory.create({ publicKeyFile: 'cert.pem' }, dir);
  assert.is((await scheme.authenticate(bearer(await sign(certKey, 'ES256')))).subject, 'alice');
});

test('a local JWKS picks the key by kid, for ES256 and RS256', async () => {
  assert.is((await jwksScheme.authenticate(bearer(await sign(ec.privateKey, 'ES256', {}, { kid: 'ec-1' })))).subject, 'alice');
  assert.is((await jwksScheme.authenticate(bearer(await sign(rsa.privateKey, 'RS256', {}, { kid: 'rsa-1' })))).subject, 'alice');
});

test('a JWKS with several fitting keys and a token without kid: the key that verifies wins', async () => {
  const scheme = await factory.create({ jwksFile: 'rotation.json' }, dir);
  assert.is((await scheme.authenticate(bearer(await sign(secondEc.privateKey, 'ES256')))).subject, 'alice');
  await refusedWith(scheme.authenticate(bearer(await sign(strangerEc.privateKey, 'ES256'))), 'signature_invalid');
});

test('a wrong signature is signature_invalid', async () => {
  await refusedWith(rsScheme.authenticate(bearer(await sign(otherRsa.privateKey, 'RS256', { iss: 'https://idp.example', aud: 'vdb' }))), 'signature_invalid');
  await refusedWith(hsScheme.authenticate(bearer(await sign(new TextEncoder().encode(`${SECRET}-other`), 'HS256'))), 'signature_invalid');
  const [header, , signature] = (await sign(secretKey, 'HS256')).split('.');
  const forged = base64url.encode(JSON.stringify({ sub: 'root', roles: ['admin'], exp: now() + 300 }));
  await refusedWith(hsScheme.authenticate(bearer(`${header}.${forged}.${signature}`)), 'signature_invalid');
});

test('a kid that is not in the JWKS is signature_invalid', async () => {
  await refusedWith(jwksScheme.authenticate(bearer(await sign(ec.privateKey, 'ES256', {}, { kid: 'gone' }))), 'signature_invalid');
});

test('an algorithm that is not allowed is signature_invalid, including alg none and HS256 keyed with the public key', async () => {
  const rsOnly = await factory.create({ publicKeyFile: 'rsa.pem', algorithms: ['RS256'] }, dir);
  await refusedWith(rsOnly.authenticate(bearer(await sign(secretKey, 'HS256'))), 'signature_invalid');
  const pemAsSecret = new TextEncoder().encode(readFileSync(join(dir, 'rsa.pem'), 'utf8'));
  await refusedWith(rsOnly.authenticate(bearer(await sign(pemAsSecret, 'HS256'))), 'signature_invalid');
  const unsecured = (claims: JWTPayload) =>
    `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify(claims))}.`;
  for (const scheme of [rsOnly, hsScheme, jwksScheme]) {
    await refusedWith(scheme.authenticate(bearer(unsecured({ sub: 'root', exp: now() + 300 }))), 'signature_invalid');
  }
  await refusedWith(jwksScheme.authenticate(bearer(await sign(secretKey, 'HS256', {}, { kid: 'ec-1' }))), 'signature_invalid');
});

test('an expired token is token_expired', async () => {
  await refusedWith(hsScheme.authenticate(bearer(await sign(secretKey, 'HS256', { exp: now() - 120 }))), 'token_expired');
});

test('a token whose nbf is in the future is token_not_yet_valid', async () => {
  await refusedWith(hsScheme.authenticate(bearer(await sign(secretKey, 'HS256', { nbf: now() + 120 }))), 'token_not_yet_valid');
});

test('exp and nbf within the default 30 s clock tolerance are accepted; with tolerance 0 they are not', async () => {
  const late = await sign(secretKey, 'HS256', { exp: now() - 10 });
  const early = await sign(secretKey, 'HS256', { nbf: now() + 10 });
  assert.is((await hsScheme.authenticate(bearer(late))).subject, 'alice');
  assert.is((await hsScheme.authenticate(bearer(early))).subject, 'alice');
  const strict = await factory.create({ secret: SECRET, clockToleranceSeconds: 0 }, dir);
  await refusedWith(strict.authenticate(bearer(late)), 'token_expired');
  await refusedWith(strict.authenticate(bearer(early)), 'token_not_yet_valid');
});

test('a wrong issuer or audience is claim_invalid, naming the claim', async () => {
  const wrongIssuer = await refusedWith(
    rsScheme.authenticate(bearer(await sign(rsa.privateKey, 'RS256', { iss: 'https://evil.example', aud: 'vdb' }))),
    'claim_invalid',
  );
  assert.match(wrongIssuer.message, '"iss"');
  const wrongAudience = await refusedWith(
    rsScheme.authenticate(bearer(await sign(rsa.privateKey, 'RS256', { iss: 'https://idp.example', aud: 'other-service' }))),
    'claim_invalid',
  );
  assert.match(wrongAudience.message, '"aud"');
  await refusedWith(rsScheme.authenticate(bearer(await sign(rsa.privateKey, 'RS256', { iss: 'https://idp.example' }))), 'claim_invalid');
});

test('roles from a dotted path (Keycloak realm_access.roles) and a custom subject claim', async () => {
  const scheme = await factory.create({ secret: SECRET, claims: { subject: 'preferred_username', roles: 'realm_access.roles' } }, dir);
  const token = await sign(secretKey, 'HS256', { preferred_username: 'bob', realm_access: { roles: ['clerk', 'admin'] } });
  assert.equal(await scheme.authenticate(bearer(token)), { subject: 'bob', roles: ['clerk', 'admin'], scheme: 'jwt' });
});

test('roles from a space-separated string (OAuth scope)', async () => {
  const scheme = await factory.create({ secret: SECRET, claims: { roles: 'scope' } }, dir);
  const token = await sign(secretKey, 'HS256', { scope: 'analyst  clerk' });
  assert.equal((await scheme.authenticate(bearer(token))).roles, ['analyst', 'clerk']);
});

test('a top-level claim whose name holds dots wins over the dotted path (Auth0 namespaced claims)', async () => {
  const scheme = await factory.create({ secret: SECRET, claims: { roles: 'https://vdb.example/roles' } }, dir);
  const token = await sign(secretKey, 'HS256', { 'https://vdb.example/roles': ['admin'] });
  assert.equal((await scheme.authenticate(bearer(token))).roles, ['admin']);
});

test('an absent roles claim gives no roles; a roles claim of another type is claim_invalid', async () => {
  assert.equal((await hsScheme.authenticate(bearer(await sign(secretKey, 'HS256', { roles: undefined })))).roles, []);
  await refusedWith(hsScheme.authenticate(bearer(await sign(secretKey, 'HS256', { roles: 7 }))), 'claim_invalid');
  await refusedWith(hsScheme.authenticate(bearer(await sign(secretKey, 'HS256', { roles: ['a', 1] }))), 'claim_invalid');
});

test('a missing or empty subject is claim_invalid', async () => {
  await refusedWith(hsScheme.authenticate(bearer(await sign(secretKey, 'HS256', { sub: undefined }))), 'claim_invalid');
  await refusedWith(hsScheme.authenticate(bearer(await sign(secretKey, 'HS256', { sub: '' }))), 'claim_invalid');
});

test('missing, malformed and non-JWT credentials', async () => {
  await refusedWith(hsScheme.authenticate({}), 'credentials_missing');
  await refusedWith(hsScheme.authenticate({ authorization: 'Basic YWxpY2U6c2VjcmV0' }), 'credentials_malformed');
  // A claims set that is not a JSON object is found only after the signature is checked.
  const notAnObject = await new CompactSign(new TextEncoder().encode('[1]')).setProtectedHeader({ alg: 'HS256' }).sign(secretKey);
  for (const token of ['not-a-jwt', 'a.b.c', notAnObject]) {
    await refusedWith(hsScheme.authenticate(bearer(token)), 'credentials_malformed');
  }
});

test('the challenge is Bearer with the service realm', () => {
  assert.is(hsScheme.challenge, 'Bearer realm="vdb-service"');
});

test('a missing key file stops startup with a StartupError naming the file', async () => {
  assert.match(await startupMessage(factory.create({ publicKeyFile: 'keys/missing.pem' }, dir)), /keys\/missing\.pem: auth\.publicKeyFile: key file not found/);
  assert.match(await startupMessage(factory.create({ jwksFile: 'absent-jwks.json' }, dir)), /absent-jwks\.json: auth\.jwksFile: key file not found/);
});

test('unusable key material stops startup', async () => {
  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ publicKeyFile: writeFile('private.pem', await exportPKCS8((await generateKeyPair('RS256', { extractable: true })).privateKey)) }, /holds a private key/],
    [{ publicKeyFile: writeFile('weak.pem', weak) }, /must hold an RSA key of at least 2048 bits/],
    [{ publicKeyFile: writeFile('garbage.pem', 'hello') }, /is not a PEM public key or X\.509 certificate/],
    [{ jwksFile: writeFile('not-json.json', '{') }, /is not JSON/],
    [{ jwksFile: writeFile('no-keys.json', '{"keys": "none"}') }, /needs a "keys" array/],
    [{ jwksFile: writeFile('oct.json', '{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}') }, /holds no signature key/],
    [{ jwksFile: writeFile('private-jwk.json', JSON.stringify({ keys: [await exportJWK(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)] })) }, /key 0 is a private key/],
  ];
  for (const [config, expected] of cases) assert.match(await startupMessage(factory.create(config, dir)), expected);
});

test('algorithms the key cannot verify, or two key sources, stop startup', async () => {
  assert.match(await startupMessage(factory.create({ publicKeyFile: 'rsa.pem', algorithms: ['HS256', 'RS256'] }, dir)), 'auth.algorithms: HS256 cannot be verified with publicKeyFile');
  assert.match(await startupMessage(factory.create({ secret: SECRET, algorithms: ['ES256'] }, dir)), 'ES256 cannot be verified with secret');
  assert.match(await startupMessage(factory.create({ secret: SECRET, jwksFile: 'jwks.json' }, dir)), 'auth: give exactly one of secret, publicKeyFile, jwksFile');
  assert.match(await startupMessage(factory.create({}, dir)), 'give exactly one of');
});

const manifest = builtInManifest('auth-jwt');
const validate = configValidator(manifest);

test('plugin.json is a valid authScheme manifest with id jwt that marks the secret', () => {
  assert.equal(manifestProblems(manifest), []);
  assert.is(manifest.kind, 'authScheme');
  assert.is(manifest.id, 'jwt');
  assert.is((manifest.configSchema as { properties: { secret: Record<string, unknown> } }).properties.secret['x-secret'], true);
});

test('configSchema accepts valid auth sections and fills defaults', () => {
  const full = {
    jwksFile: 'keys/jwks.json',
    algorithms: ['RS256', 'ES256'],
    issuer: 'https://idp.example/realms/retail',
    audience: ['vdb-service'],
    clockToleranceSeconds: 60,
    claims: { subject: 'preferred_username', roles: 'realm_access.roles' },
  };
  assert.ok(validate(full), JSON.stringify(validate.errors));
  const minimal: Record<string, unknown> = { secret: SECRET, audience: 'vdb-service' };
  assert.ok(validate(minimal), JSON.stringify(validate.errors));
  assert.is(minimal['clockToleranceSeconds'], 30);
  assert.equal(minimal['claims'], { subject: 'sub', roles: 'roles' });
});

test('configSchema refuses invalid auth sections', () => {
  const invalid: unknown[] = [
    {},
    { secret: 'too-short' },
    { secret: SECRET, publicKeyFile: 'k.pem' },
    { publicKeyFile: 'k.pem', algorithms: ['PS256'] },
    { publicKeyFile: 'k.pem', algorithms: [] },
    { publicKeyFile: 'k.pem', audience: [] },
    { publicKeyFile: 'k.pem', audience: 42 },
    { publicKeyFile: 'k.pem', clockToleranceSeconds: -1 },
    { publicKeyFile: 'k.pem', claims: { group: 'groups' } },
    { publicKeyFile: 'k.pem', jwksUrl: 'https://idp.example/jwks' },
  ];
  for (const section of invalid) assert.not.ok(validate(section), JSON.stringify(section));
});

test.run();
