import { defineSqlDialect } from '../../core/plugin-api/adapter-kit.js';
import { MysqlDialect } from './mysql-dialect.js';

export default defineSqlDialect((id) => new MysqlDialect(id));
