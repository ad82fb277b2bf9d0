import { sharedPglite } from '../../support/shared-pglite.js';
import { runGovernedSuite } from './governed-suite.js';

runGovernedSuite({ name: 'pglite', open: sharedPglite, closeAfter: false });
