import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SemanticRegistry } from '../../../core/semantic/semantic-registry.js';
import type { ActivationFailurePolicy, SemanticState, VdbActivation } from '../../../core/semantic/semantic-types.js';

const registry = suite('semantic registry: health precedence and validate problems');

function activation(version: string, state: SemanticState, policy: ActivationFailurePolicy = 'isolate', semanticConfigured = true): VdbActivation {
  const failed = state === 'invalid' || state === 'compileFailed';
  return {
    name: 'retail', version, generation: 1, state, activationFailurePolicy: policy, semanticConfigured, compilationFailure: null, package: null,
    diagnostics: failed ? [{
      code: 'bind.column_not_found', osiCode: 'E_NAME_NOT_FOUND', severity: 'error', document: 'semantic/retail/sales.osi.yaml', location: { line: 7, column: 3 },
      target: 'column:sales.orders.amount', message: 'no such column', remediation: 'fix it',
    }] : [],
  };
}

registry('availability follows the precedence unavailable > degraded > available > catalogOnly > notConfigured', () => {
  const cases: [VdbActivation[], string][] = [
    [[activation('1', 'active'), activation('2', 'invalid', 'isolate'), activation('3', 'compileFailed', 'blockStartup')], 'unavailable'],
    [[activation('1', 'active'), activation('2', 'compileFailed', 'isolate')], 'degraded'],
    [[activation('1', 'active'), activation('2', 'catalogOnly')], 'available'],
    [[activation('1', 'catalogOnly'), activation('2', 'catalogOnly', 'isolate', false)], 'catalogOnly'],
    [[activation('1', 'catalogOnly', 'isolate', false)], 'notConfigured'],
    [[], 'notConfigured'],
  ];
  for (const [activations, expected] of cases) assert.is(new SemanticRegistry(activations).health().semanticAvailability, expected);
});

registry('only a failure under blockStartup blocks startup', () => {
  assert.not.ok(new SemanticRegistry([activation('1', 'invalid', 'isolate')]).startupBlocked);
  assert.ok(new SemanticRegistry([activation('1', 'invalid', 'blockStartup')]).startupBlocked);
  assert.not.ok(new SemanticRegistry([activation('1', 'active', 'blockStartup')]).startupBlocked);
});

registry('VDBs are listed by name, then version in numeric order', () => {
  const listed = new SemanticRegistry([activation('10', 'active'), activation('2', 'active'), activation('1', 'active')]).list();
  assert.equal(listed.map((entry) => entry.version), ['1', '2', '10']);
});

registry('problems for validate: each error as file:line, an error under blockStartup and a warning under isolate', () => {
  const problems = new SemanticRegistry([activation('1', 'invalid', 'blockStartup'), activation('2', 'invalid', 'isolate')]).problems('/srv/bundle');
  assert.equal(problems.map((problem) => [problem.file.endsWith('/srv/bundle/semantic/retail/sales.osi.yaml'), problem.line, problem.severity]), [[true, 7, 'error'], [true, 7, 'warning']]);
  assert.is(problems[0]?.message, 'semantic model of retail 1: bind.column_not_found: no such column');
});

registry.run();
