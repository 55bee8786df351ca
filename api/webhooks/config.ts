// Configuration of the webhook deliveries (README, Configuration): environment variables, overridable in tests.
import fs from 'node:fs';
import { env, parseEnv } from '../../lib/env';

export interface WebhookConfig {
  /** Hosts (names or IP literals, lower case) exempt from the private-address rule: tests reach their loopback
   * receiver this way. Empty in production. WEBHOOK_ALLOWED_HOSTS=host1,host2. */
  allowedHosts: string[];
  /** Extra trusted CA certificates (PEM) for the receivers' TLS, added to Node's defaults: WEBHOOK_CA_FILE. */
  ca?: string;
  /** A receiver's answer deadline (specification: 10 s): WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number;
  /** Deliveries in flight at once per process (p-queue): WEBHOOK_CONCURRENCY. */
  concurrency: number;
  /** Waits before the 1st, 2nd and 3rd retry (1, 5 and 25 minutes). */
  retryDelaysMs: number[];
}

export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 25 * 60_000];

export function webhookConfigFromEnv(source: NodeJS.ProcessEnv = process.env): WebhookConfig {
  const e = source === process.env ? env() : parseEnv(source);
  return {
    allowedHosts: e.WEBHOOK_ALLOWED_HOSTS.map((h) => h.toLowerCase()),
    ca: e.WEBHOOK_CA_FILE ? fs.readFileSync(e.WEBHOOK_CA_FILE, 'utf8') : undefined,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    concurrency: e.WEBHOOK_CONCURRENCY,
    retryDelaysMs: RETRY_DELAYS_MS,
  };
}
