import { sharedPglite } from '../../support/shared-pglite.js';
import { runEndpointSuite } from './endpoint-suite.js';

runEndpointSuite({ name: 'pglite', family: 'postgres', open: sharedPglite, closeAfter: false, readsWithoutLeadingBom: true });
