import { messageOf } from '../plugin-api/errors.js';

/** The config key that chose a listener's address: what a person changes when it cannot bind. */
export type ListenerKey = 'server' | 'server.admin';

/** A listener that could not bind its address, with the key that set it, so the message can say what to change. */
export class ListenFailure extends Error {
  constructor(readonly host: string, readonly port: number, readonly key: ListenerKey, cause: unknown) {
    super(`cannot listen on ${host}:${port}: ${messageOf(cause)}`, { cause });
    this.name = 'ListenFailure';
  }
}

/** Where the port of a listen failure came from, as the message names it. */
export interface PortOrigin {
  /** The config file as shown to people. */
  configFile: string;
  /** What replaced `server.port`, e.g. `--port 9000` or `PORT=9000`; absent when the config set it. */
  overriddenBy?: string | undefined;
}

/**
 * One line for a listener that could not bind: the address, the reason in plain words, and what sets it
 * (the config key, or the flag or variable that replaced it). No stack: the person can act on this line.
 */
export function listenFailureMessage(failure: ListenFailure, origin: PortOrigin): string {
  const code = (failure.cause as { code?: unknown } | undefined)?.code;
  const address = `${failure.host}:${failure.port}`;
  const portKey = `${failure.key}.port`;
  const setBy = failure.key === 'server' && origin.overriddenBy !== undefined
    ? `set by ${origin.overriddenBy}, which overrides ${portKey} in ${origin.configFile}`
    : `${portKey} in ${origin.configFile}${failure.key === 'server' ? '; or PORT=... / --port ...' : ''}`;
  switch (code) {
    case 'EADDRINUSE':
      return `cannot listen on ${address}: the port is taken (${setBy})`;
    case 'EACCES':
      return `cannot listen on ${address}: permission denied, ports below 1024 need privileges (${setBy})`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${address}: ${failure.host} is not an address of this machine (${failure.key}.host in ${origin.configFile})`;
    default:
      return `${failure.message} (${setBy})`;
  }
}
