import { configFileFrom } from '../config/config-loader.js';
import { startService } from '../service.js';

/** `vdb-service start [--config FILE]`: serves until SIGTERM or SIGINT, then drains requests and exits 0. */
export async function startCommand(argv: string[]): Promise<number> {
  const service = await startService({ configFile: configFileFrom(argv, process.env) });
  service.logger.info({ url: service.url, adminUrl: service.adminUrl }, 'vdb-service listening');
  const stop = (signal: string) => {
    service.logger.info({ signal }, 'shutting down: draining requests');
    void service.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return new Promise<number>(() => undefined);
}
