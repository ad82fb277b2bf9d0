import type { Server } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import type { DescribedRoute } from './openapi/openapi-types.js';

/**
 * A group of routes. `listener` says where it is served: `main`, or `admin` (the admin listener when
 * `server.admin` is configured, else the main one). Routes resolve what they need from the container.
 */
export interface RouteModule {
  name: string;
  listener: 'main' | 'admin' | 'every';
  register(server: Server, container: DependencyContainer): void;
  /**
   * The operations `register` serves, for the OpenAPI document: each module describes its own routes, so
   * the document follows the routes (a suite checks every registered route is described). Absent for a
   * module that serves no route of its own (the startup gate).
   */
  describe?(container: DependencyContainer): DescribedRoute[];
}
