import { defineSqlDialect } from '../../core/plugin-api/adapter-kit.js';
import { OracleDialect } from './oracle-dialect.js';

export default defineSqlDialect((id) => new OracleDialect(id));
