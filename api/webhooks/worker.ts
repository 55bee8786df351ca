// The delivery worker, one per API process: each poll claims due deliveries from the state (api/store: on SQLite one
// process at a time holds the claims, on PostgreSQL each delivery is claimed by one replica), sends them with a bounded
// number in flight (p-queue), confirms its claim right before each send and records the attempt under it as soon as it
// ends. A process killed mid-flight leaves its claims to expire: another process then sends those deliveries (same
// webhook-id, so a receiver can tell a repeat whose success was never recorded). A claim outlasts a receiver's
// deadline, so a live holder always records before anyone else may take a delivery over.
import PQueue from 'p-queue';
import { systemClock, type Clock } from '../clock';
import type { AppContext } from '../context';
import type { DueDelivery } from './queue';
import { post } from './send';
import { env } from '../../lib/env';

/** What a claim outlasts a receiver's deadline by: the time to confirm the claim before and record the attempt after. */
const CLAIM_MARGIN_MS = 2_000;

export interface WorkerOptions {
  /** How often the queue is polled for due deliveries. */
  pollMs?: number;
  /**
   * Lifetime of a claim (WEBHOOK_LEASE_MS, default 30 s; at least the receiver's deadline plus 2 s): a process that dies
   * holding claims delays those deliveries at most this long.
   */
  leaseMs?: number;
  /** Due deliveries claimed per poll. */
  batch?: number;
  /** Real time for the signature's timestamp (the injected ctx.clock schedules retries). */
  wallClock?: Clock;
}

export class DeliveryWorker {
  /**
   * The name on this worker's claims: the process as the state knows it (on PostgreSQL the replica's id, whose lease
   * tells the others whether it is alive).
   */
  get owner(): string {
    return this.ctx.state.credits.owner;
  }
  private readonly queue: PQueue;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<number> | undefined;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly batch: number;
  private readonly wall: Clock;
  private stopping = false;

  constructor(
    private readonly ctx: AppContext,
    opts: WorkerOptions = {},
  ) {
    this.queue = new PQueue({ concurrency: ctx.webhooks.concurrency });
    this.pollMs = opts.pollMs ?? 1000;
    this.leaseMs = Math.max(opts.leaseMs ?? env().WEBHOOK_LEASE_MS, ctx.webhooks.timeoutMs + CLAIM_MARGIN_MS);
    this.batch = opts.batch ?? 200;
    this.wall = opts.wallClock ?? systemClock;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick().catch((e: Error) => this.ctx.logger.error({ err: e }, 'delivery worker tick failed')), this.pollMs);
    this.timer.unref();
  }

  /** One poll: claims due deliveries and queues them; returns how many. */
  tick(): Promise<number> {
    this.ticking ??= this.poll().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async poll(): Promise<number> {
    if (this.stopping) return 0;
    // Never more claimed than twice what can run: the rest stays unclaimed in the state, where a crash cannot lose it.
    const room = Math.min(this.batch, 2 * this.ctx.webhooks.concurrency - this.queue.size - this.queue.pending);
    if (room <= 0) return 0;
    // Idle (the usual state): one read, no write, no lock.
    if (!(await this.ctx.state.deliveries.anyDue(this.ctx.clock.now(), this.owner))) return 0;
    const due = await this.ctx.state.deliveries.claim(this.owner, this.ctx.clock.now(), room, this.leaseMs);
    for (const d of due) void this.queue.add(() => this.attempt(d));
    return due.length;
  }

  private async attempt(d: DueDelivery): Promise<void> {
    if (this.stopping) return;
    const { deliveries } = this.ctx.state;
    // Still ours, its alert still active (a 410 to another delivery may have deactivated it), the claim renewed for the
    // send: otherwise another process owns it now, or it waits, pending.
    if (!(await deliveries.confirm(d, this.owner, this.leaseMs))) return;
    const result = await post(d, this.ctx.webhooks, this.wall.now());
    const outcome = await deliveries.recordAttempt(d, this.owner, result, this.ctx.clock.now(), this.ctx.webhooks.retryDelaysMs);
    this.ctx.logger.info({ delivery: d.id, alert: d.alert_id, attempt: d.attempts + 1, status: result.status, error: result.error, outcome }, 'webhook delivery');
  }

  /** Polls until nothing is due for this worker and nothing is in flight (tests, and a graceful stop). */
  async drain(): Promise<void> {
    for (;;) {
      await this.tick();
      await this.queue.onIdle();
      if (!(await this.ctx.state.deliveries.anyDue(this.ctx.clock.now(), this.owner))) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Stops polling, lets the sends in flight finish and record, and gives the unsent claims back. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.queue.clear();
    await this.ticking?.catch(() => undefined);
    await this.queue.onIdle();
    this.stopping = true;
    await this.ctx.state.deliveries.release(this.owner);
  }
}
