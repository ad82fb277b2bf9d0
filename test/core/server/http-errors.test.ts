import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CredentialError } from '../../../core/plugin-api/auth-scheme.js';
import { ERROR_CATALOG, type ErrorCode } from '../../../core/plugin-api/error-catalog.js';
import { PayloadTooLargeError, ServiceError } from '../../../core/plugin-api/errors.js';
import { CredentialRefusal } from '../../../core/server/authentication.js';
import { toHttpFailure } from '../../../core/server/http-errors.js';

/** Any catalogued code, whatever its category: the edge reads the status from the catalog alone. */
class AnyCode extends ServiceError {}
const CHALLENGE = 'Bearer realm="vdb-service"';

test('every code is answered with its catalog status; the task envelope carries its retryable', () => {
  for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) {
    const standard = toHttpFailure(new AnyCode(code, 'why', { details: { at: 1 } }), 'standard');
    assert.equal([standard.status, standard.body], [ERROR_CATALOG[code].status, { code, message: 'why', details: { at: 1 } }], code);
    assert.is(standard.serverSide, ERROR_CATALOG[code].status >= 500, code);
    const answered = ERROR_CATALOG[code].inTaskEnvelope?.code ?? code;
    const task = toHttpFailure(new AnyCode(code, 'why'), 'task');
    assert.is(task.status, ERROR_CATALOG[answered].status, code);
    assert.equal({ ...task.body, message: undefined }, { format: 'service-task-error', formatVersion: 1, code: answered, message: undefined, retryable: ERROR_CATALOG[answered].retryable }, code);
  }
});

test('the Task API spelling of an oversized body says its own message; other spellings keep the thrower\'s', () => {
  assert.is(toHttpFailure(new PayloadTooLargeError('body_too_large', 'over 10 bytes'), 'task').body.message, ERROR_CATALOG.request_too_large.message);
  assert.is(toHttpFailure(new AnyCode('invalid_body', 'not JSON'), 'task').body.message, 'not JSON');
});

test('a refused credential: the reason and an invalid_token challenge, bare when none was sent or on the Task API', () => {
  const refused = new CredentialRefusal(CHALLENGE, new CredentialError('token_unknown', 'the bearer token is not "known"'));
  const standard = toHttpFailure(refused, 'standard');
  assert.equal([standard.status, standard.body.code, standard.headers], [401, 'token_unknown', {
    'WWW-Authenticate': `${CHALLENGE}, error="invalid_token", error_description="the bearer token is not 'known'"`,
  }]);
  const task = toHttpFailure(refused, 'task');
  assert.equal([task.status, task.body.code, task.body.message, task.headers], [401, 'unauthenticated', 'the bearer token is not "known"', { 'WWW-Authenticate': CHALLENGE }]);
  const missing = toHttpFailure(new CredentialRefusal(CHALLENGE, new CredentialError('credentials_missing', 'no credentials')), 'standard');
  assert.equal([missing.body.code, missing.headers], ['credentials_missing', { 'WWW-Authenticate': CHALLENGE }]);
});

test('restify\'s own refusals keep their status under the catalog\'s codes; anything else is a bare 500', () => {
  const restify = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });
  assert.equal(toHttpFailure(restify(404, '/x does not exist'), 'standard').body, { code: 'not_found', message: 'no such route', details: {} });
  assert.equal(toHttpFailure(restify(405, 'POST is not allowed'), 'standard').body, { code: 'method_not_allowed', message: 'method not allowed on this route', details: {} });
  assert.equal(toHttpFailure(restify(406, 'no formatter\nfor text/csv'), 'standard').body, { code: 'not_acceptable', message: 'no formatter', details: {} });
  const teapot = toHttpFailure(restify(418, 'short and stout'), 'standard');
  assert.equal([teapot.status, teapot.body.code, teapot.serverSide], [418, 'invalid_request', false]);
  const bug = toHttpFailure(new Error('secret at /srv/app.js'), 'task');
  assert.equal([bug.status, bug.body, bug.serverSide], [500, { format: 'service-task-error', formatVersion: 1, code: 'internal_error', message: 'internal error', retryable: false }, true]);
});

test.run();
