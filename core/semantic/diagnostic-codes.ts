import type { DiagnosticSeverity } from './semantic-types.js';

/**
 * The stages of an activation, in the order they run. A diagnostic's stage decides the state it causes
 * (any error before `compile` makes the VDB `invalid`, a compile error makes it `compileFailed`) and its
 * place in the sorted list: an earlier stage's error is the cause of what a later stage would report.
 */
export type ActivationStage = 'acquire' | 'resolve' | 'bind' | 'compile';

export const STAGE_ORDER: Readonly<Record<ActivationStage, number>> = { acquire: 0, resolve: 1, bind: 2, compile: 3 };

/**
 * The OSI Foundation's error codes (foundational_semantics.md, Appendix A) that a model document can
 * raise; a diagnostic of a rule the Foundation states carries its code beside the service's own.
 */
export type OsiModelErrorCode =
  | 'E_AGGREGATE_IN_FIELD' | 'E_NESTED_AGGREGATION_DEFERRED' | 'E_NAME_COLLISION' | 'E_NAME_NOT_FOUND'
  | 'E_DEFERRED_KEY_REJECTED' | 'E_NO_PATH' | 'E_AMBIGUOUS_PATH' | 'E_UNAGGREGATED_FINER_GRAIN_REFERENCE' | 'E3012_MN_NO_SAFE_REWRITE'
  | 'E_WINDOWED_METRIC_COMPOSITION' | 'E_DEFERRED_FRAME_MODE' | 'E_NESTED_WINDOW';

export interface DiagnosticDefinition {
  /** The stage that reports it; `null` when it depends on where it happened (internal errors). */
  stage: ActivationStage | null;
  severity: DiagnosticSeverity;
  /** The Foundation's code for the same rule, when it has one. */
  osiCode?: OsiModelErrorCode;
  /** One line on when it is reported, for docs/diagnostics.md. */
  summary: string;
  remediation: string;
}

/**
 * Every diagnostic code, with its stage, severity and remediation. docs/diagnostics.md lists the same
 * codes; a test checks that each has a fixture module that triggers it.
 */
export const DIAGNOSTICS = {
  'provider.unknown': {
    stage: 'acquire', severity: 'error',
    summary: 'The reference names a semantic provider id that no installed plugin registers.',
    remediation: 'Use an installed provider id (bundle, http, catalog), or list the plugin that provides it under `plugins` in service.yaml, then restart.',
  },
  'provider.uri_invalid': {
    stage: 'acquire', severity: 'error',
    summary: 'The provider cannot use the uri: a bundle module outside the descriptor bundle, or an http module that is not an https URL.',
    remediation: 'A bundle module is a folder inside the descriptor bundle (e.g. `semantic/retail`); an http module is an https URL of its manifest.yaml or folder (plain http only on loopback addresses).',
  },
  'provider.unreachable': {
    stage: 'acquire', severity: 'error',
    summary: 'The provider did not deliver a file: connection refused, timeout, or an error status after the retries.',
    remediation: 'Check that the provider is reachable from the service host and answers within the timeout, then restart the service: inputs are read once, at startup.',
  },
  'provider.media_type_unsupported': {
    stage: 'acquire', severity: 'error',
    summary: 'The reference asks for a media type the provider does not deliver, or a file was served with a media type that is not YAML, JSON or text.',
    remediation: 'Use `mediaType: application/vnd.vdb.semantic-module+yaml` (or leave it out), and serve module files as YAML, JSON or plain text rather than HTML.',
  },
  'module.file_too_large': {
    stage: 'acquire', severity: 'error',
    summary: 'A module file is larger than 16 MiB.',
    remediation: 'Split the model into several documents listed in the manifest.',
  },
  'module.manifest_missing': {
    stage: 'acquire', severity: 'error',
    summary: 'The module location holds no manifest.yaml.',
    remediation: 'Check the module uri: the folder (or URL) must hold manifest.yaml.',
  },
  'module.digest_mismatch': {
    stage: 'acquire', severity: 'error',
    summary: 'The SHA-256 of manifest.yaml differs from the sha256 of the VDB reference.',
    remediation: 'If the manifest change is intended, put the output of `sha256sum manifest.yaml` into the reference\'s sha256; otherwise restore the manifest the reference pins. Then restart.',
  },
  'module.manifest_invalid': {
    stage: 'acquire', severity: 'error',
    summary: 'manifest.yaml is not valid YAML or does not have the manifest shape (name, version, namespace, documents).',
    remediation: 'Fix the key at the location; docs/semantic.md shows the manifest format.',
  },
  'module.identity_mismatch': {
    stage: 'acquire', severity: 'error',
    summary: 'The manifest\'s name or version differs from the name or version the VDB reference expects.',
    remediation: 'Make the reference\'s name and version equal the manifest\'s, or point the reference at the intended module.',
  },
  'module.document_missing': {
    stage: 'acquire', severity: 'error',
    summary: 'A document listed in the manifest is not in the module.',
    remediation: 'Add the file to the module, or remove it from `documents` in manifest.yaml.',
  },
  'module.document_digest_mismatch': {
    stage: 'acquire', severity: 'error',
    summary: 'The SHA-256 of a document differs from the sha256 the manifest lists for it.',
    remediation: 'Put the output of `sha256sum <document>` into its sha256 in manifest.yaml, then update the manifest digest in the VDB reference.',
  },
  'module.media_type_unsupported': {
    stage: 'acquire', severity: 'error',
    summary: 'The manifest lists a document with a media type the service does not read.',
    remediation: 'List OSI documents as `application/vnd.osi+yaml` or `application/vnd.osi+json`.',
  },
  'module.document_unlisted': {
    stage: 'acquire', severity: 'warning',
    summary: 'A file in the module folder is not listed in the manifest, so it is ignored.',
    remediation: 'List the file under `documents` in manifest.yaml, or remove it from the module folder.',
  },
  'document.yaml_invalid': {
    stage: 'acquire', severity: 'error',
    summary: 'A document is not valid YAML (or JSON), has a duplicate key, or uses too many aliases.',
    remediation: 'Fix the syntax at the location.',
  },
  'document.deferred_key': {
    stage: 'acquire', severity: 'error', osiCode: 'E_DEFERRED_KEY_REJECTED',
    summary: 'A document uses a key the OSI Foundation recognises but defers (referential_integrity, condition, asof, range, grain, filter, natural_grain, using_relationships, joins, …).',
    remediation: 'Remove the key: the Foundation defers it to a later proposal, and the service follows the Foundation\'s defaults (docs/semantic.md).',
  },
  'document.version_unknown': {
    stage: 'acquire', severity: 'warning',
    summary: 'A document\'s `version` is none the service knows (1.0, 0.1.0, 0.1.1, 0.2.0.dev0); it is read as the latest.',
    remediation: 'Check that the document means what the latest Ossie version says, then set `version` to that version.',
  },
  'document.schema_invalid': {
    stage: 'acquire', severity: 'error',
    summary: 'A document does not follow OSI 1.0 with the service\'s additions: an unknown key, a missing required key or a wrong type.',
    remediation: 'Fix the key at the location; docs/semantic.md lists the accepted keys.',
  },
  'resolve.unknown_import': {
    stage: 'resolve', severity: 'error',
    summary: 'A document imports a namespace that no document of the module declares.',
    remediation: 'Import a namespace the module defines (a document\'s `namespace`, or the manifest\'s), or remove the import.',
  },
  'resolve.namespace_not_imported': {
    stage: 'resolve', severity: 'error', osiCode: 'E_NAME_NOT_FOUND',
    summary: 'A qualified name uses a namespace that the document neither is in nor imports.',
    remediation: 'Add the namespace to the document\'s `imports`, or qualify the name with a namespace the document sees.',
  },
  'resolve.ambiguous_definition': {
    stage: 'resolve', severity: 'error', osiCode: 'E_NAME_COLLISION',
    summary: 'Two definitions share one name in one scope: datasets, metrics or relationships of a namespace, or fields of a dataset.',
    remediation: 'Rename one of the definitions, or move it to another namespace.',
  },
  'resolve.name_collision': {
    stage: 'resolve', severity: 'error', osiCode: 'E_NAME_COLLISION',
    summary: 'Two global names of a namespace (datasets, relationships and metrics share one) are equal once normalised: the same name for two kinds, or names that differ only in case.',
    remediation: 'Rename one of them: datasets, relationships and metrics of a namespace need names that differ other than in case.',
  },
  'resolve.reserved_name': {
    stage: 'resolve', severity: 'error', osiCode: 'E_DEFERRED_KEY_REJECTED',
    summary: 'A dataset, field, relationship or metric is named GRAIN, FILTER or QUERY_FILTER, which the OSI Foundation reserves (in any case).',
    remediation: 'Rename the definition; GRAIN, FILTER and QUERY_FILTER are reserved for deferred Foundation features.',
  },
  'resolve.ambiguous_reference': {
    stage: 'resolve', severity: 'error',
    summary: 'An unqualified name is defined in more than one imported namespace.',
    remediation: 'Qualify the name with its namespace (`namespace.name`), or import only one of the namespaces.',
  },
  'resolve.unknown_dataset': {
    stage: 'resolve', severity: 'error', osiCode: 'E_NAME_NOT_FOUND',
    summary: 'A relationship or metric names a dataset that is not defined in any namespace the document sees.',
    remediation: 'Name a dataset of the document\'s namespace or of an imported one; check the spelling.',
  },
  'resolve.unknown_field': {
    stage: 'resolve', severity: 'error', osiCode: 'E_NAME_NOT_FOUND',
    summary: 'A metric names a field that its dataset does not define, and its relation has no column of that name.',
    remediation: 'Reference a field the dataset defines (`dataset.field`) or a column of its relation, or add the field to the dataset.',
  },
  'resolve.unknown_metric': {
    stage: 'resolve', severity: 'error', osiCode: 'E_NAME_NOT_FOUND',
    summary: 'A metric expression uses a bare name that is not a metric; fields are always written `dataset.field`.',
    remediation: 'Write fields as `dataset.field`, or name a metric the document sees.',
  },
  'resolve.unbound_source': {
    stage: 'resolve', severity: 'error',
    summary: 'A dataset source names only a relation, no default schema is set, and several schemas of the VDB have that relation.',
    remediation: 'Set `semantic.defaultSchema` in the VDB file (or `defaultSchema` in the manifest), or write the source as `schema.relation`.',
  },
  'resolve.source_invalid': {
    stage: 'resolve', severity: 'error',
    summary: 'A dataset source is not `relation`, `schema.relation` or `database.schema.relation`; query sources are not supported.',
    remediation: 'Name a table or view of the VDB; for a query, create a view in the database and include it in the VDB.',
  },
  'resolve.relationship_arity_mismatch': {
    stage: 'resolve', severity: 'error',
    summary: 'A relationship lists a different number of from_columns and to_columns.',
    remediation: 'List the same number of columns on both sides, in corresponding order.',
  },
  'bind.database_not_found': {
    stage: 'bind', severity: 'error',
    summary: 'The first part of a three-part source names no datasource of the VDB: not its id, its database name, an alias of the VDB file or the VDB name.',
    remediation: 'Map the name to the datasource under `semantic.databaseAliases` of the VDB file (e.g. `databaseAliases: { tpcds: warehouse }`).',
  },
  'bind.schema_not_found': {
    stage: 'bind', severity: 'error',
    summary: 'A binding or a dataset source names a schema that is not a schema of the VDB.',
    remediation: 'Use a schema listed under `schemas` in the VDB file, or add the schema to the VDB.',
  },
  'bind.relation_not_found': {
    stage: 'bind', severity: 'error',
    summary: 'A dataset source names a relation that the VDB catalog does not have.',
    remediation: 'Compare the source with the VDB catalog (`GET /api/v1/vdbs/{vdb}/versions/{version}/catalog`): the relation must exist and be included in the VDB.',
  },
  'bind.column_not_found': {
    stage: 'bind', severity: 'error', osiCode: 'E_NAME_NOT_FOUND',
    summary: 'A field expression, key or relationship names a column that the dataset\'s relation does not have.',
    remediation: 'Compare the column with the relation in the VDB catalog; for PostgreSQL, unquoted names are folded to lower case.',
  },
  'bind.type_mismatch': {
    stage: 'bind', severity: 'error',
    summary: 'A field\'s `logical_type` differs from its column\'s logical type, or relationship columns have incompatible types.',
    remediation: 'Set `logical_type` to the column\'s logical type from the VDB catalog (or remove it); join columns of compatible types.',
  },
  'bind.key_not_enforced': {
    stage: 'bind', severity: 'warning',
    summary: 'A declared primary or unique key of a table is not a primary key or unique constraint in the database.',
    remediation: 'Declare the key the table has, or add the constraint to the table; otherwise joins on it may repeat rows.',
  },
  'bind.relationship_target_not_key': {
    stage: 'bind', severity: 'warning',
    summary: 'A relationship\'s to_columns are none of the keys the `to` dataset has, so it is many-to-many (in a model that declares no key, a `to` without any takes to_columns as its key).',
    remediation: 'Point to_columns at a key of the `to` dataset, or declare that key in `primary_key` or `unique_keys`.',
  },
  'bind.bridge_invalid': {
    stage: 'bind', severity: 'error',
    summary: 'A dataset declared `role: bridge` does not have many-to-one relationships to two or more other datasets.',
    remediation: 'Declare a relationship from the bridge to each dataset it links (to_columns a key of that dataset), or remove `role: bridge`.',
  },
  'compile.dialect_unavailable': {
    stage: 'compile', severity: 'error',
    summary: 'An expression has no variant in a SQL dialect: only MDX, DAX, TABLEAU or MAQL ones.',
    remediation: 'Add a variant in SQL under `expression.dialects` (`ANSI_SQL`, or a plain string in OSI_SQL_2026).',
  },
  'compile.expression_outside_subset': {
    stage: 'compile', severity: 'error',
    summary: 'An OSI_SQL_2026 expression uses a function, operator or construct outside the OSI expression language (a vendor function, a `::` cast, a subquery, …).',
    remediation: 'Use the functions and operators of the OSI expression language, or write the expression as an `ANSI_SQL` variant in the datasource\'s own SQL.',
  },
  'compile.function_unavailable': {
    stage: 'compile', severity: 'error',
    summary: 'An OSI_SQL_2026 expression calls a function of the OSI expression language that the datasource\'s database does not have and the service has no portable form of (e.g. `TRY_CAST` on PostgreSQL, `MEDIAN` on MySQL).',
    remediation: 'Use an equivalent the database has (`CAST`, `CASE WHEN`), or add an `ANSI_SQL` variant in the database\'s own SQL.',
  },
  'compile.nested_aggregate': {
    stage: 'compile', severity: 'error', osiCode: 'E_NESTED_AGGREGATION_DEFERRED',
    summary: 'A metric applies an aggregate to another aggregate, directly (`AVG(COUNT(x))`) or through a metric it names (`AVG(revenue)`).',
    remediation: 'Aggregate the fields in one step (`SUM(orders.total)`, not `SUM(SUM(orders.total))`); combine metrics with arithmetic outside aggregates.',
  },
  'compile.windowed_metric_composition': {
    stage: 'compile', severity: 'error', osiCode: 'E_WINDOWED_METRIC_COMPOSITION',
    summary: 'A metric names another metric whose expression holds a window function (`running_total + 0`); the Foundation defers that composition (§6.10.5).',
    remediation: 'Ask for the windowed metric directly as a measure, or write the window in this metric over the underlying aggregates (`SUM(revenue) OVER (…)`).',
  },
  'compile.deferred_frame_mode': {
    stage: 'compile', severity: 'error', osiCode: 'E_DEFERRED_FRAME_MODE',
    summary: 'A window frame of a field or metric is one the Foundation defers (§6.10.6): `GROUPS`, or a `PRECEDING`/`FOLLOWING` bound that is no literal whole number.',
    remediation: 'Use a `ROWS` or `RANGE` frame with `UNBOUNDED`, `CURRENT ROW` or a literal whole number of rows.',
  },
  'compile.nested_window': {
    stage: 'compile', severity: 'error', osiCode: 'E_NESTED_WINDOW',
    summary: 'A window function of a field or metric is inside another window function (`SUM(SUM(x) OVER (…)) OVER ()`), which has no grain to run at.',
    remediation: 'Compute the inner window in a field of its dataset and name that field in the outer window, or ask for each as a measure of its own.',
  },
  'compile.expression_invalid': {
    stage: 'compile', severity: 'error',
    summary: 'An expression does not parse in the SQL grammar of its datasource, or is not one plain expression (an alias, a subquery, a second statement).',
    remediation: 'Write one scalar SQL expression (a field) or one aggregate expression (a metric) in the datasource\'s dialect, without subqueries.',
  },
  'compile.aggregate_in_field': {
    stage: 'compile', severity: 'error', osiCode: 'E_AGGREGATE_IN_FIELD',
    summary: 'A field expression uses an aggregate function; fields are row-level.',
    remediation: 'Move the aggregate into a metric and reference the field from it.',
  },
  'compile.field_finer_grain_reference': {
    stage: 'compile', severity: 'error', osiCode: 'E_UNAGGREGATED_FINER_GRAIN_REFERENCE',
    summary: 'A field reads a field of a dataset on the many side of its own (e.g. customers reading orders.total): one row would have many values.',
    remediation: 'Aggregate the value in a metric (`SUM(orders.total)`) and query it by the dataset\'s fields.',
  },
  'compile.field_across_many_to_many': {
    stage: 'compile', severity: 'error', osiCode: 'E3012_MN_NO_SAFE_REWRITE',
    summary: 'A field reads a field of a dataset related to its own many-to-many.',
    remediation: 'Aggregate the value in a metric; across a many-to-many relationship a row has many values.',
  },
  'compile.field_path_ambiguous': {
    stage: 'compile', severity: 'error', osiCode: 'E_AMBIGUOUS_PATH',
    summary: 'A field reads a field of a dataset its own reaches along more than one chain of many-to-one relationships (enrichment needs one path, Foundation §4.3.1).',
    remediation: 'Remove the redundant relationship, or read the value in a field of a dataset with one path to it.',
  },
  'compile.cross_datasource_field': {
    stage: 'compile', severity: 'info',
    summary: 'A field enriches its rows from a dataset that lives in another datasource: it is published, marked with the datasources it reads (`datasources`), and any query using it is federated, compiled in PostgreSQL\'s dialect.',
    remediation: 'Nothing, where federated queries suit; to have its queries run on one datasource, move both relations to one datasource.',
  },
  'compile.field_cycle': {
    stage: 'compile', severity: 'error', osiCode: 'E_NAME_NOT_FOUND',
    summary: 'Fields reference each other in a cycle (a field naming itself included).',
    remediation: 'Break the cycle: one of the fields must read columns only.',
  },
  'compile.metric_not_aggregate': {
    stage: 'compile', severity: 'error', osiCode: 'E_UNAGGREGATED_FINER_GRAIN_REFERENCE',
    summary: 'A metric expression (with the metrics it names) has no aggregate function.',
    remediation: 'Aggregate the fields, e.g. `SUM(orders.total)`, or make the value a field of its dataset.',
  },
  'compile.metric_cycle': {
    stage: 'compile', severity: 'error', osiCode: 'E_NAME_NOT_FOUND',
    summary: 'Metrics reference each other in a cycle.',
    remediation: 'Break the cycle: one of the metrics must be defined from fields only.',
  },
  'compile.join_path_missing': {
    stage: 'compile', severity: 'error', osiCode: 'E_NO_PATH',
    summary: 'A metric reads datasets that no chain of relationships connects.',
    remediation: 'Add a relationship between the datasets, or split the metric.',
  },
  'compile.join_path_ambiguous': {
    stage: 'compile', severity: 'error', osiCode: 'E_AMBIGUOUS_PATH',
    summary: 'A metric reads datasets that two different shortest chains of relationships connect.',
    remediation: 'Remove the redundant relationship, or split the metric so each reads datasets joined one way.',
  },
  'compile.cross_datasource_metric': {
    stage: 'compile', severity: 'info',
    summary: 'A metric reads datasets that live in different datasources: it is published, marked with the datasources it reads (`datasources`), and any query using it is federated, compiled in PostgreSQL\'s dialect.',
    remediation: 'Nothing, where federated queries suit; to have its queries run on one datasource, define it over datasets of one datasource.',
  },
  'activation.internal_error': {
    stage: null, severity: 'error',
    summary: 'Activation failed on an unexpected error of the service or a provider plugin; the model was not published.',
    remediation: 'Report it with the service log around the activation of this VDB; restart after a fix.',
  },
} as const satisfies Record<string, DiagnosticDefinition>;

export type DiagnosticCode = keyof typeof DIAGNOSTICS;
