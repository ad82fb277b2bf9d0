import type { DirectCalls } from './direct-tool-call.js';
import type { NodeStreamableTransport } from './node-transport.js';

export interface McpSessionEntry {
  transport: NodeStreamableTransport;
  /** The session's tool calls the door answers itself, in flight. */
  calls: DirectCalls;
  /** The scheme and subject of the caller that opened it. */
  owner: string;
}

/**
 * The open MCP sessions, at most `max` (`mcp.maxSessions`): past it the least recently used one is closed,
 * so that clients that never end theirs cannot grow the process. A Map keeps insertion order; a session is
 * moved to the end each time it is used.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSessionEntry>();

  constructor(private readonly max: number) {}

  get(id: string): McpSessionEntry | undefined {
    const session = this.sessions.get(id);
    if (session) {
      this.sessions.delete(id);
      this.sessions.set(id, session);
    }
    return session;
  }

  add(id: string, session: McpSessionEntry): void {
    while (this.sessions.size >= this.max) {
      const [oldest, entry] = this.sessions.entries().next().value as [string, McpSessionEntry];
      this.sessions.delete(oldest);
      void entry.transport.close();
    }
    this.sessions.set(id, session);
  }

  remove(id: string): void {
    this.sessions.delete(id);
  }
}
