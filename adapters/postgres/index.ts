import { defineSqlDialect } from '../../core/plugin-api/adapter-kit.js';
import { PostgresDialect } from './postgres-dialect.js';

export default defineSqlDialect((id) => new PostgresDialect(id));
