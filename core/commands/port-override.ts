import { StartupError } from '../plugin-api/errors.js';

/** A listen port chosen outside the config file, and how it was chosen, for the message when it is taken. */
export interface PortOverride {
  port: number;
  /** `--port 9000` or `PORT=9000`. */
  setBy: string;
}

/**
 * `--port N` (or `--port=N`) wins over `$PORT`, which wins over `server.port`: platforms hand a port in
 * `PORT`, and a person running a second copy should not have to edit the config. Undefined: keep the config's.
 * @throws StartupError when the value is not a port number.
 */
export function portOverride(argv: readonly string[], env: NodeJS.ProcessEnv): PortOverride | undefined {
  const flag = argv.indexOf('--port');
  if (flag >= 0) return parsed(argv[flag + 1], '--port', (value) => `--port ${value}`);
  const inline = argv.find((arg) => arg.startsWith('--port='));
  if (inline !== undefined) return parsed(inline.slice('--port='.length), '--port', (value) => `--port ${value}`);
  const fromEnv = env['PORT'];
  if (fromEnv !== undefined && fromEnv !== '') return parsed(fromEnv, 'PORT', (value) => `PORT=${value}`);
  return undefined;
}

function parsed(text: string | undefined, name: string, setBy: (value: number) => string): PortOverride {
  const port = /^\d{1,5}$/.test(text ?? '') ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65_535)) {
    throw new StartupError(`${name}: ${text === undefined || text.startsWith('--') ? 'needs a port number' : `"${text}" is not a port number`} (0 to 65535)`);
  }
  return { port, setBy: setBy(port) };
}
