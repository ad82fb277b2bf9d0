import { forEachBackend } from '../../support/backends.js';
import { runSqlDoorSuite } from './sql-door-suite.js';

forEachBackend((backend) => runSqlDoorSuite({
  ...backend,
  open: () => backend.open(),
  // in MySQL a schema is a database: the tables live in the test database itself
  schema: backend.family === 'mysql' ? backend.database : 'sql_door_test',
  forwards: backend.name === 'postgres',
}));
