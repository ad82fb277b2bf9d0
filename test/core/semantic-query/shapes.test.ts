import { forEachBackend } from '../../support/backends.js';
import { runShapesSuite } from './shapes-suite.js';

forEachBackend((backend) => runShapesSuite({
  ...backend,
  open: () => backend.open('shapes_db'),
  // in MySQL a schema is a database: the tables live in the test database itself
  ...(backend.family === 'mysql'
    ? { schema: backend.database, setup: [], types: { timestamp: 'datetime' } }
    : { schema: 'semshapes', setup: ['create schema if not exists semshapes'], types: { timestamp: 'timestamp' } }),
}));
