import { sharedPglite } from '../../support/shared-pglite.js';
import { runSqlDoorSuite } from './sql-door-suite.js';

runSqlDoorSuite({ name: 'pglite', family: 'postgres', open: sharedPglite, closeAfter: false, schema: 'sql_door_test' });
