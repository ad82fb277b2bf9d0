/**
 * The messages between a WorkerRpc (main thread, worker-rpc.ts) and its worker (worker-rpc-serve.ts).
 * Everything crosses by structured clone, so values keep their types (numbers, booleans, bytes, text).
 */

/** A command as it crosses, with its id and when its time is up (`Date.now()` ms): one whose deadline passed while it waited is answered 57014 without running. */
export interface WorkerRequest<Command> {
  id: number;
  deadline: number;
  command: Command;
}

/** An error as it crosses: structured clone keeps an Error's message, not PostgreSQL's fields (code, detail...). */
export interface WireError {
  name: string;
  message: string;
  /** The error's own string and number properties: `code` (SQLSTATE), `detail`, `hint`, `position`... */
  fields: Record<string, string | number>;
}

/** The answer to the request of the same id; `ending`: the worker exits after it (its memory is in no known state). */
export type WorkerReply = ({ id: number; value: unknown } | { id: number; error: WireError }) & { ending?: true };

