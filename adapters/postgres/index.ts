import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { PostgresDialect } from './postgres-dialect.js';

export default defineSqlDialect((id) => new PostgresDialect(id));
