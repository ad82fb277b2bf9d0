import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { oracleDialect } from './oracle-dialect.js';

export default defineSqlDialect((id) => oracleDialect(id));
