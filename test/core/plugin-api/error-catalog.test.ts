import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ERROR_CATALOG, type ErrorCode } from '../../../core/plugin-api/error-catalog.js';

const entries = Object.entries(ERROR_CATALOG) as [ErrorCode, (typeof ERROR_CATALOG)[ErrorCode]][];

test('every status is an HTTP 4xx or 5xx', () => {
  for (const [code, { status }] of entries) {
    assert.ok(status >= 400 && status <= 599 && STATUS_CODES[status] !== undefined, `${code}: ${status}`);
  }
});

test('every code is a snake_case word with a meaning, a default message and an envelope', () => {
  for (const [code, entry] of entries) {
    assert.match(code, /^[a-z]+(_[a-z]+)*$/);
    assert.ok(entry.meaning.trim() !== '' && entry.message.trim() !== '', code);
    assert.ok(entry.envelopes.length > 0, code);
  }
});

test('every code has its row in docs/errors.md', () => {
  const doc = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');
  for (const [code, { status }] of entries) assert.ok(doc.includes(`| ${status} | \`${code}\` |`), code);
});

test('a Task API spelling is given only for codes the task envelope does not carry, and names one it does', () => {
  for (const [code, { envelopes, inTaskEnvelope }] of entries) {
    if (!inTaskEnvelope) continue;
    assert.not.ok(envelopes.includes('task'), code);
    assert.ok(ERROR_CATALOG[inTaskEnvelope.code].envelopes.includes('task'), `${code} -> ${inTaskEnvelope.code}`);
  }
});

test.run();
