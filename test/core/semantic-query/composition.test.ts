import { forEachBackend } from '../../support/backends.js';
import { runCompositionSuite } from './composition-suite.js';

forEachBackend((backend) => runCompositionSuite({
  ...backend,
  open: () => backend.open('comp_db'),
  // in MySQL a schema is a database: the tables live in the test database itself
  ...(backend.family === 'mysql'
    ? { schema: backend.database, setup: [], nullSafe: (left, right) => `${left} <=> ${right}` }
    : { schema: 'semcomp', setup: ['create schema if not exists semcomp'], nullSafe: (left, right) => `${left} IS NOT DISTINCT FROM ${right}` }),
}));
