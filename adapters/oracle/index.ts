import { defineSqlDialect } from '../../core/plugins/plugin-kinds.js';
import { oracleDialect } from './oracle-dialect.js';

export default defineSqlDialect((id) => oracleDialect(id));
