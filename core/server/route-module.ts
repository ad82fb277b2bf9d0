import type { Server } from 'restify';
import type { DependencyContainer } from 'tsyringe';

/**
 * A group of routes. `listener` says where it is served: `main`, or `admin` (the admin listener when
 * `server.admin` is configured, else the main one). Routes resolve what they need from the container.
 */
export interface RouteModule {
  name: string;
  listener: 'main' | 'admin' | 'every';
  register(server: Server, container: DependencyContainer): void;
}
