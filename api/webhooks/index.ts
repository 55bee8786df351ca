// Alerts in motion: the scan after every import (on-swap hook of the serving database) and daily at 06:00 UTC
// (node-cron), and the delivery worker. Started by api/server.ts; tests start it on their own context.
import cron from 'node-cron';
import type { AppContext } from '../context';
import { initWatermark, scanDaily, scanNewImport, type ScanReport } from './scan';
import { DeliveryWorker, type WorkerOptions } from './worker';

export const DAILY_SCAN_CRON = '0 6 * * *';

/** What the server and the tests use of the delivery worker. */
export interface Worker {
  start(): void;
  tick(): Promise<number>;
  drain(): Promise<void>;
  stop(): Promise<void>;
}

export interface Webhooks {
  worker: Worker;
  /** The last on-swap scan (tests wait for it). */
  lastImportScan?: Promise<ScanReport>;
  stop(): Promise<void>;
}

export async function startWebhooks(ctx: AppContext, opts: WorkerOptions & { cron?: boolean } = {}): Promise<Webhooks> {
  // Never a reason not to serve: without a watermark the next import's scan covers everything it holds.
  await initWatermark(ctx).catch((e: Error) => ctx.logger.warn({ err: e }, 'alert scan watermark not initialised'));
  // Every process runs one; the state decides who delivers what (api/store: claims).
  const worker: Worker = new DeliveryWorker(ctx, opts);
  const log = (kind: string) => (r: ScanReport) => {
    ctx.logger.info({ scan: kind, ...r }, `alert scan (${kind}): ${r.enqueued} deliveries enqueued`);
    void worker.tick();
    return r;
  };
  const hooks: Webhooks = {
    worker,
    async stop() {
      unsubscribe();
      task?.stop();
      await worker.stop();
    },
  };
  const unsubscribe = ctx.db.onSwap(async () => {
    hooks.lastImportScan = scanNewImport(ctx).then(log('import'));
    await hooks.lastImportScan;
  });
  const task =
    opts.cron === false
      ? undefined
      : cron.schedule(DAILY_SCAN_CRON, () => scanDaily(ctx).then(log('daily')).catch((e: Error) => ctx.logger.error({ err: e }, 'daily alert scan failed')), {
          timezone: 'UTC',
          name: 'alerts-daily-scan',
        });
  worker.start();
  return hooks;
}
