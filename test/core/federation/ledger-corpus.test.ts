// test-lane: postgres-server
// (the PostgreSQL + MariaDB pair runs on both servers, and every pair's oracle on the PostgreSQL server)
import { forEachBackend } from '../../support/backends.js';
import { corpusPairs } from './corpus-pairs.js';
import { runCorpusBothWays } from './corpus-suite.js';
import { LEDGER_CORPUS } from './ledger-data.js';

forEachBackend((backend) => {
  for (const pair of corpusPairs(backend, LEDGER_CORPUS)) runCorpusBothWays(LEDGER_CORPUS, pair, 12);
});
