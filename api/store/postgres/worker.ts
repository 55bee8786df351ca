// The webhook delivery worker of a replica on PostgreSQL. Every replica runs one: each poll claims due deliveries
// (deliveries.ts: for update skip locked, a lease per delivery), sends them with a bounded number in flight (p-queue),
// confirms its claim right before each send and records the attempt under it. A replica killed mid-flight leaves its
// claims to expire: another replica then sends those deliveries (same webhook-id). The lease is longer than a
// receiver's deadline, so a live holder always records before anyone else may take a delivery over.
import PQueue from 'p-queue';
import { systemClock, type Clock } from '../../clock';
import type { AppContext } from '../../context';
import type { DueDelivery } from '../../webhooks/queue';
import { post } from '../../webhooks/send';
import { anyDue, claimDue, confirmClaim, recordAttempt, releaseClaims } from './deliveries';
import type { PgState } from './index';

/** What a claim outlasts a receiver's deadline by: the time to confirm the claim before and record the attempt after. */
const CLAIM_MARGIN_MS = 2_000;

export interface PgWorkerOptions {
  pollMs?: number;
  /** The claim of a delivery (WEBHOOK_LEASE_MS, default 30 s); at least the receiver's deadline plus CLAIM_MARGIN_MS. */
  leaseMs?: number;
  batch?: number;
  wallClock?: Clock;
}

export class PgDeliveryWorker {
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
    private readonly state: PgState,
    opts: PgWorkerOptions = {},
  ) {
    this.queue = new PQueue({ concurrency: ctx.webhooks.concurrency });
    this.pollMs = opts.pollMs ?? 1000;
    this.leaseMs = Math.max(opts.leaseMs ?? Number(process.env.WEBHOOK_LEASE_MS ?? 30_000), ctx.webhooks.timeoutMs + CLAIM_MARGIN_MS);
    this.batch = opts.batch ?? 200;
    this.wall = opts.wallClock ?? systemClock;
  }

  /** This replica's name on its claims. */
  get owner(): string {
    return this.state.lease.id;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick().catch((e: Error) => this.ctx.logger.error({ err: e }, 'delivery worker tick failed')), this.pollMs);
    this.timer.unref();
  }

  tick(): Promise<number> {
    this.ticking ??= this.poll().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async poll(): Promise<number> {
    if (this.stopping) return 0;
    // Never more claimed than twice what can run: the rest stays unclaimed, for the other replicas.
    const room = Math.min(this.batch, 2 * this.ctx.webhooks.concurrency - this.queue.size - this.queue.pending);
    if (room <= 0) return 0;
    // Idle (the usual state): one read, no lock.
    if (!(await anyDue(this.state.pool, this.ctx.clock.now()))) return 0;
    const due = await claimDue(this.state.pool, this.owner, this.ctx.clock.now(), room, this.leaseMs);
    for (const d of due) void this.queue.add(() => this.attempt(d));
    return due.length;
  }

  private async attempt(d: DueDelivery): Promise<void> {
    if (this.stopping) return;
    // Still ours, its alert still active, the lease renewed for the send: otherwise someone else owns it now.
    if (!(await confirmClaim(this.state.pool, d, this.owner, this.leaseMs))) return;
    const result = await post(d, this.ctx.webhooks, this.wall.now());
    const outcome = await recordAttempt(this.state.pool, d, this.owner, result, this.ctx.clock.now(), this.ctx.webhooks.retryDelaysMs);
    this.ctx.logger.info({ delivery: d.id, alert: d.alert_id, attempt: d.attempts + 1, status: result.status, error: result.error, outcome }, 'webhook delivery');
  }

  /** Polls until nothing is due and nothing is in flight. */
  async drain(): Promise<void> {
    for (;;) {
      await this.tick();
      await this.queue.onIdle();
      if (!(await anyDue(this.state.pool, this.ctx.clock.now()))) return;
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
    await releaseClaims(this.state.pool, this.owner);
  }
}
