import { configFileFrom } from '../config/config-loader.js';
import { logDestination } from '../logging.js';
import { startService } from '../service.js';
import { portOverride } from './port-override.js';
import { startupSummary } from './startup-summary.js';

/**
 * `vdb-service start [--config FILE] [--port N]`: serves until SIGTERM or SIGINT, then drains requests and
 * exits 0. After the JSON log line, a few lines for people go to stderr (stdout holds only JSON logs).
 */
export async function startCommand(argv: string[]): Promise<number> {
  const port = portOverride(argv, process.env);
  const logs = logDestination(1, { batched: true });
  const service = await startService({ configFile: configFileFrom(argv, process.env), logDestination: logs, ...(port && { port: port.port, portSetBy: port.setBy }) });
  const stop = (signal: string) => {
    service.logger.info({ signal }, 'shutting down: draining requests');
    void service.close().then(() => process.exit(0), (error: unknown) => {
      service.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const sql = service.sqlAddress && `${service.sqlAddress.host}:${service.sqlAddress.port}`;
  service.logger.info({ url: service.url, adminUrl: service.adminUrl, ...(sql && { sql }) }, 'vdb-service listening');
  // the destination batches its lines: the JSON line goes out first, the lines for people follow it
  logs.flushSync();
  process.stderr.write(startupSummary(service).map((line) => `${line}\n`).join(''));
  return new Promise<number>(() => undefined);
}
