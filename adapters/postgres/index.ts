import { defineSqlDialect } from '../../core/plugins/plugin-kinds.js';
import { postgresDialect } from './postgres-dialect.js';

export default defineSqlDialect((id) => postgresDialect(id));
