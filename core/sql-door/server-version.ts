/**
 * The PostgreSQL server the door presents itself as: reported at startup (`server_version`), by `SHOW`, by
 * `version()` and `current_setting('server_version_num')` (the catalog mirror's own functions,
 * catalog/mirror-ddl.ts). Clients pick their SQL by it; PostgreSQL 15 is what the door's catalog answers
 * and type mapping were checked against.
 */
export const SERVER_VERSION = '15.0 (vdb-service)';
export const SERVER_VERSION_NUM = '150000';
