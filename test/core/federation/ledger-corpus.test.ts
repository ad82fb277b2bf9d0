// test-lane: postgres-server
// (the PostgreSQL + MariaDB pair runs on both servers, and every pair's oracle on the PostgreSQL server)
import { runCorpusOnPairs } from './corpus-pairs.js';
import { LEDGER_CORPUS } from './ledger-data.js';

runCorpusOnPairs(LEDGER_CORPUS);
