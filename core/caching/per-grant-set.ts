/**
 * Values derived once per VDB (or its catalog) and grant set. Grant sets are interned per role set
 * (core/authorization/grants.ts) and VDBs are loaded once, so a request of a known caller finds its value
 * by identity, without hashing. Weak keys: a dropped VDB (a closed test service) takes its values along.
 */
export class PerGrantSet<Scope extends object, Grants extends object, Value> {
  private readonly values = new WeakMap<Scope, WeakMap<Grants, Value>>();

  /** The value for this scope and grant set; `derive` runs only the first time. */
  get(scope: Scope, grants: Grants, derive: () => Value): Value {
    let byGrants = this.values.get(scope);
    if (!byGrants) this.values.set(scope, (byGrants = new WeakMap()));
    let value = byGrants.get(grants);
    if (value === undefined) byGrants.set(grants, (value = derive()));
    return value;
  }
}
