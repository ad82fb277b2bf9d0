import { forEachBackend } from '../../support/backends.js';
import { runGovernedSuite } from './governed-suite.js';

/** The same server and database as `url`, as another login (the test server trusts local connections). */
function as(url: string, login: string): string {
  const other = new URL(url);
  other.username = login;
  other.password = '';
  return other.toString();
}

// MySQL's governed suite is its own (governed-mysql.test.ts): its users are server-wide and its roles differ
forEachBackend((backend) => {
  const { url } = backend;
  runGovernedSuite({
    ...backend,
    open: () => backend.open(),
    ...(url === undefined ? {} : { connectingAs: (login: string) => ({ ...backend.datasourceConfig, connection: { connectionString: as(url, login) } }) }),
  });
}, ['postgres']);
