import { suite } from 'uvu';
import { dialectConformance } from '../../core/conformance/dialect-conformance.js';
import { forEachBackend, type Backend } from '../support/backends.js';

/** A server of the backend's kind that does not answer (port 1), logging in with a password the errors must not show. */
const UNREACHABLE: Partial<Record<Backend['name'], { url: string; password: string }>> = {
  postgres: { url: 'postgres://postgres:pg-secret-pw@127.0.0.1:1/test', password: 'pg-secret-pw' },
  mysql: { url: 'mysql://root:my-secret-pw@127.0.0.1:1/test', password: 'my-secret-pw' },
};

// The dialect conformance suite of the adapter kit on each backend, one uvu test per case.
forEachBackend((backend) => {
  const test = suite(`dialect conformance: ${backend.name}`);
  const unreachable = UNREACHABLE[backend.name];
  const { serverCases, unreachableCase } = dialectConformance({
    open: () => backend.open(`conformance_${backend.name}`),
    // the process's shared PGlite serves the other suites too: it is neither closed nor close-tested here
    closable: backend.closeAfter,
    ...(unreachable && { unreachable: { password: unreachable.password, open: () => backend.open('unreachable', unreachable.url) } }),
  });
  for (const check of serverCases) {
    if (backend.skip !== undefined) test.skip(`${check.name} (skipped: ${backend.skip})`);
    else test(check.name, check.run);
  }
  // needs no server: runs even when the rest is skipped
  if (unreachableCase) test(unreachableCase.name, unreachableCase.run);
  test.run();
});
