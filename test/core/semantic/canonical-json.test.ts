import canonicalizeModule from 'canonicalize';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalJson } from '../../../core/semantic/digests.js';
import { activateVdb } from '../../../core/semantic/vdb-activation.js';
import { demoDescriptors } from '../../support/test-service.js';
import { activationContext, vdbFromFile } from '../../support/semantic-test-support.js';

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string;
const canonical = suite('canonical JSON (RFC 8785)');

canonical('gives the bytes of the canonicalize library: key order, escapes, numbers, nesting', () => {
  const samples: unknown[] = [
    { b: 1, a: [3, { d: null, c: 'x' }], '': true },
    { '\u20ac': 1, '\r': 2, 'a\u0000': 3, A: 4, é: 5, '\ud83d\ude00': 6 },
    [1.5e21, 1e-7, -0, 0.1 + 0.2, 9007199254740993, -1e300],
    { text: 'quote " backslash \\ line\u2028 tab\t control\u0001 emoji 😀 é' },
    { nested: { '10': 'ten', '2': 'two', a: { '1': [] } } },
    { skipped: undefined, kept: [undefined, 1] },
  ];
  for (const sample of samples) assert.is(canonicalJson(sample), canonicalize(sample), JSON.stringify(sample));
});

canonical('numbers JSON cannot hold are refused, as the library refuses them', () => {
  assert.throws(() => canonicalJson({ a: Number.NaN }));
  assert.throws(() => canonicalJson([Number.POSITIVE_INFINITY]));
});

canonical('the demo package is byte for byte what the library writes', async () => {
  const activation = await activateVdb(vdbFromFile(join(demoDescriptors, 'vdbs', 'retail-1.yaml')), activationContext(demoDescriptors));
  assert.is(activation.package?.canonicalJson, canonicalize(activation.package?.document));
});

canonical.run();
