import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { postgresDialect } from './postgres-dialect.js';

export default defineSqlDialect((id) => postgresDialect(id));
