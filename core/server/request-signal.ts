import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** One controller per client connection: creating an AbortSignal costs about 10 µs in Node 20, a socket serves many requests. */
const connections = new WeakMap<Socket, AbortController>();

/**
 * Aborted when the client of the request has gone away: its connection closed, which is how a client
 * abandons an HTTP/1.1 request. The statements run for the request take it (`QueryOptions.signal`), so a
 * database cancels them rather than running on for nobody. A request out of time needs no signal: each of its
 * statements has `server.requestTimeoutMs` as its own time limit, enforced by the database.
 */
export function requestSignal(req: IncomingMessage): AbortSignal {
  const { socket } = req;
  let controller = connections.get(socket);
  if (controller === undefined) {
    const created = new AbortController();
    socket.once('close', () => created.abort(new Error('the client went away')));
    connections.set(socket, (controller = created));
  }
  return controller.signal;
}
