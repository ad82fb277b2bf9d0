import { suite } from 'uvu';
import { dialectConformance, type DialectConformanceTarget } from '../../core/conformance/dialect-conformance.js';

/** Runs the dialect conformance suite of the adapter kit under uvu, one test per case. */
export function runDialectConformance(target: DialectConformanceTarget & {
  /** Suite label, e.g. `postgres`. */
  name: string;
  /** Why the server cases cannot run here (no server URL): they are then registered as skipped. */
  skip?: string | undefined;
}): void {
  const test = suite(`dialect conformance: ${target.name}`);
  const { serverCases, unreachableCase } = dialectConformance(target);
  for (const check of serverCases) {
    if (target.skip !== undefined) test.skip(`${check.name} (skipped: ${target.skip})`);
    else test(check.name, check.run);
  }
  // Needs no server: runs even when the rest is skipped.
  if (unreachableCase) test(unreachableCase.name, unreachableCase.run);
  test.run();
}
