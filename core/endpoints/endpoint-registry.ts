import { NotFoundError } from '../plugin-api/errors.js';
import type { ActionEndpoint } from './action-endpoint.js';
import type { QueryEndpoint } from './query-endpoint.js';

/** The query and action endpoints of the bundle, registered at startup and fixed after. */
export class EndpointRegistry {
  constructor(
    private readonly queries: ReadonlyMap<string, QueryEndpoint>,
    private readonly actions: ReadonlyMap<string, ActionEndpoint>,
  ) {}

  /** The query of exactly that name, if any: a URL's raw segment never names one through decoding. */
  findQuery(name: string): QueryEndpoint | undefined {
    return this.queries.get(name);
  }

  /** 404 `unknown_query` when there is no query of that name. */
  query(name: string): QueryEndpoint {
    const query = this.queries.get(name);
    if (!query) throw new NotFoundError('unknown_query', `no query named ${name}`);
    return query;
  }

  /** 404 `unknown_action` when there is no action of that name. */
  action(name: string): ActionEndpoint {
    const action = this.actions.get(name);
    if (!action) throw new NotFoundError('unknown_action', `no action named ${name}`);
    return action;
  }

  /** Every query and action, by name: the OpenAPI document describes each as an operation of its own. */
  list(): { queries: QueryEndpoint[]; actions: ActionEndpoint[] } {
    const byName = <T extends { name: string }>(endpoints: Iterable<T>) => [...endpoints].sort((a, b) => a.name.localeCompare(b.name));
    return { queries: byName(this.queries.values()), actions: byName(this.actions.values()) };
  }
}
