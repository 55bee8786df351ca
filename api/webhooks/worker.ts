// The delivery worker: one at a time across every API process sharing the state (a lease, renewed while working, taken
// over when it expires), a bounded number of deliveries in flight (p-queue), each attempt recorded in the state as soon
// as it ends. A process killed mid-flight leaves its deliveries pending: the next lease holder sends
// them (same webhook-id, so a receiver can tell a repeat whose success we never recorded).
import crypto from 'node:crypto';
import PQueue from 'p-queue';
import { systemClock, type Clock } from '../clock';
import type { AppContext } from '../context';
import type { DeliveryClaims } from '../store';
import type { DueDelivery } from './queue';
import { post } from './send';

const LEASE = 'alert-deliveries';

export interface WorkerOptions {
  /** How often the queue is polled for due deliveries. */
  pollMs?: number;
  /** Lifetime of the lease; a process that dies holding it blocks deliveries at most this long (WEBHOOK_LEASE_MS). */
  leaseMs?: number;
  /** Due deliveries taken per poll. */
  batch?: number;
  /** Real time for the lease and the signature's timestamp (the injected ctx.clock schedules retries). */
  wallClock?: Clock;
}

export class DeliveryWorker {
  readonly owner = `${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  private readonly queue: PQueue;
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<number> | undefined;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly batch: number;
  private readonly wall: Clock;

  constructor(
    private readonly ctx: AppContext,
    opts: WorkerOptions = {},
  ) {
    this.queue = new PQueue({ concurrency: ctx.webhooks.concurrency });
    this.pollMs = opts.pollMs ?? 1000;
    this.leaseMs = opts.leaseMs ?? Number(process.env.WEBHOOK_LEASE_MS ?? 30_000);
    this.batch = opts.batch ?? 200;
    this.wall = opts.wallClock ?? systemClock;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick().catch((e: Error) => this.ctx.logger.error({ err: e }, 'delivery worker tick failed')), this.pollMs);
    this.timer.unref();
  }

  /** Takes or renews the lease: true when this process is the one worker. */
  holdLease(): Promise<boolean> {
    const now = this.wall.now().getTime();
    return this.ctx.state.leases.acquire(LEASE, this.owner, now + this.leaseMs, now);
  }

  /** One poll: when holding the lease, queues the due deliveries not already in flight; returns how many. */
  tick(): Promise<number> {
    this.ticking ??= this.poll().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async poll(): Promise<number> {
    // Idle (the usual state): one read, no write, so an idle worker never contends for the state's write lock.
    if (this.inFlight.size === 0 && !(await this.anyDue())) return 0;
    if (!(await this.holdLease())) return 0;
    // Never more queued than twice what can run: the rest waits in the state, where a crash cannot lose it.
    const room = Math.min(this.batch, 2 * this.ctx.webhooks.concurrency - this.queue.size - this.queue.pending);
    if (room <= 0) return 0;
    const due = (await this.ctx.state.deliveries.due(this.ctx.clock.now(), room + this.inFlight.size)).filter((d) => !this.inFlight.has(d.id)).slice(0, room);
    for (const d of due) {
      this.inFlight.add(d.id);
      void this.queue.add(() => this.attempt(d)).finally(() => this.inFlight.delete(d.id));
    }
    return due.length;
  }

  private async attempt(d: DueDelivery): Promise<void> {
    // The lease may have passed to another process while this waited its turn: it then owns the delivery.
    if (!(await this.holdLease())) return;
    // Its alert may have been deactivated (a 410 to another delivery) while this waited: it then waits, pending.
    if (!(await this.ctx.state.alerts.isActive(d.alert_id))) return;
    const result = await post(d, this.ctx.webhooks, this.wall.now());
    const outcome = await this.ctx.state.deliveries.recordAttempt(d, result, this.ctx.clock.now(), this.ctx.webhooks.retryDelaysMs);
    this.ctx.logger.info({ delivery: d.id, alert: d.alert_id, attempt: d.attempts + 1, status: result.status, error: result.error, outcome }, 'webhook delivery');
  }

  /** Polls until nothing is due and nothing is in flight (tests, and a graceful stop). */
  async drain(): Promise<void> {
    for (;;) {
      await this.tick();
      await this.queue.onIdle();
      if (!(await this.holdLease())) return;
      if (this.inFlight.size === 0 && !(await this.anyDue())) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Stops polling, lets the attempts in flight finish, and gives the lease up. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.queue.clear();
    await this.ticking;
    await this.queue.onIdle();
    await this.ctx.state.leases.release(LEASE, this.owner);
  }

  private async anyDue(): Promise<boolean> {
    return (await this.ctx.state.deliveries.due(this.ctx.clock.now(), 1)).length > 0;
  }
}

/** What a claim outlasts a receiver's deadline by: the time to confirm the claim before and record the attempt after. */
const CLAIM_MARGIN_MS = 2_000;

/**
 * The worker of a replica when the state offers per-delivery claims (PostgreSQL): every replica runs one. Each poll
 * claims due deliveries (`for update skip locked`, a lease per delivery), sends them with a bounded number in flight,
 * confirms its claim right before each send and records the attempt under it. A replica killed mid-flight leaves its
 * claims to expire: another replica then sends those deliveries (same webhook-id). The claim outlasts a receiver's
 * deadline, so a live holder always records before anyone else may take a delivery over.
 */
export class ClaimingWorker {
  /** The claims' owner: this process as the state knows it (on PostgreSQL, the replica's id in `replicas`). */
  readonly owner: string;
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
    private readonly claims: DeliveryClaims,
    opts: WorkerOptions = {},
  ) {
    this.owner = ctx.state.credits.owner;
    this.queue = new PQueue({ concurrency: ctx.webhooks.concurrency });
    this.pollMs = opts.pollMs ?? 1000;
    this.leaseMs = Math.max(opts.leaseMs ?? Number(process.env.WEBHOOK_LEASE_MS ?? 30_000), ctx.webhooks.timeoutMs + CLAIM_MARGIN_MS);
    this.batch = opts.batch ?? 200;
    this.wall = opts.wallClock ?? systemClock;
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
    if (!(await this.claims.anyDue(this.ctx.clock.now()))) return 0;
    const due = await this.claims.claim(this.owner, this.ctx.clock.now(), room, this.leaseMs);
    for (const d of due) void this.queue.add(() => this.attempt(d));
    return due.length;
  }

  private async attempt(d: DueDelivery): Promise<void> {
    if (this.stopping) return;
    // Still ours, its alert still active, the claim renewed for the send: otherwise someone else owns it now.
    if (!(await this.claims.confirm(d, this.owner, this.leaseMs))) return;
    const result = await post(d, this.ctx.webhooks, this.wall.now());
    const outcome = await this.claims.record(d, this.owner, result, this.ctx.clock.now(), this.ctx.webhooks.retryDelaysMs);
    this.ctx.logger.info({ delivery: d.id, alert: d.alert_id, attempt: d.attempts + 1, status: result.status, error: result.error, outcome }, 'webhook delivery');
  }

  /** Polls until nothing is due and nothing is in flight. */
  async drain(): Promise<void> {
    for (;;) {
      await this.tick();
      await this.queue.onIdle();
      if (!(await this.claims.anyDue(this.ctx.clock.now()))) return;
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
    await this.claims.release(this.owner);
  }
}
