/**
 * Plans by statement text (docs/federation.md#the-plan-cache): a plan depends on the text, the relations the
 * authorizer found, and of the bound values only on their JavaScript types (whether a predicate on one is
 * pushed); it holds the values' positions, not the values, so each request runs it with its own. Per VDB, with
 * weak keys as the authorizer's caches: a VDB loaded again (a new catalog, its datasources) plans anew.
 */
import { LruCaches } from '../caching/lru-cache.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { planFederated, type FederatedPlan, type ReadRelation } from './federated-plan.js';

/** Plans kept per VDB, the least recently used forgotten first. */
const CACHE_ENTRIES = 500;
/** Longer texts are planned each time, so the cache stays small whatever callers send. */
const CACHED_SQL_MAX_LENGTH = 16_384;

const plans = new LruCaches<VirtualDatabase, string, FederatedPlan>(CACHE_ENTRIES);

/** The relations' part of a key, made once per array (the authorizer's cached decision keeps its array). */
const relationKeys = new WeakMap<readonly ReadRelation[], string>();

/**
 * The plan of `sql` over `relations` for values of the types of `bindings`: from the cache, or made and kept.
 * @throws InputError `federation_unsupported` as `planFederated`.
 */
export function cachedPlan(handle: VdbHandle, sql: string, bindings: readonly unknown[], relations: readonly ReadRelation[]): Promise<FederatedPlan> {
  if (sql.length > CACHED_SQL_MAX_LENGTH) return planFederated(handle, sql, bindings, relations);
  const cache = plans.of(handle.vdb);
  const key = `${bindings.map(typeOfValue).join('')}\u0000${relationsKey(relations)}\u0000${sql}`;
  const cached = cache.get(key);
  if (cached !== undefined) return Promise.resolve(cached);
  const planned = planFederated(handle, sql, bindings, relations);
  // a refusal is answered, not kept: the caller's error is the one thrown
  planned.then((plan) => cache.set(key, plan), () => undefined);
  return planned;
}

/** What the plan reads of a bound value: none (NULL), a number, a text, or another kind. */
function typeOfValue(value: unknown): string {
  if (value === null || value === undefined) return 'n';
  return typeof value === 'number' ? 'i' : typeof value === 'string' ? 's' : 'o';
}

function relationsKey(relations: readonly ReadRelation[]): string {
  let key = relationKeys.get(relations);
  if (key === undefined) {
    key = relations.map((relation) => `${relation.schema}.${relation.name}(${relation.columns.join(',')})`).join(';');
    relationKeys.set(relations, key);
  }
  return key;
}
