import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DIAGNOSTICS } from '../../../core/semantic/diagnostic-catalog.js';
import { projectRoot } from '../../support/test-service.js';

test('docs/diagnostics.md lists every diagnostic code with its severity and remediation, and no other', () => {
  const doc = readFileSync(join(projectRoot, 'docs', 'diagnostics.md'), 'utf8');
  const rows = new Map([...doc.matchAll(/^\| `([a-z]+\.[a-z_]+)` \| (\w+) \| [^\n]* \| ([^\n]*) \|$/gm)].map((match) => [match[1], { severity: match[2], remediation: match[3] }]));
  for (const [code, definition] of Object.entries(DIAGNOSTICS)) {
    assert.equal(rows.get(code), { severity: definition.severity, remediation: definition.remediation.replaceAll('|', '\\|') }, code);
  }
  assert.equal([...rows.keys()].filter((code) => !(code in DIAGNOSTICS)), []);
});

test.run();
