import type { JsonValue } from '../plugin-api/sql-dialect.js';

/** The Apache Ossie document version the service exports (core/semantic/ossie/osi-schema.json is its schema). */
export const OSSIE_VERSION = '0.2.0.dev0';

/** An Apache Ossie document as the admin API exports a model (core/semantic/ossie-export.ts). */
export interface OssieDocument {
  version: typeof OSSIE_VERSION;
  semantic_model: { name: string; description?: string; ai_context?: JsonValue; custom_extensions?: JsonValue; datasets: object[]; relationships?: object[]; metrics?: object[] }[];
}
