// One delivery attempt: an HTTPS POST signed per the Standard Webhooks specification (webhook-id = delivery id,
// webhook-timestamp, webhook-signature `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed by the decoded
// whsec_ secret), within the timeout, to an address the private-address rule allows (checked in the connection's own
// DNS lookup, api/webhooks/ssrf.ts). Any non-2xx, a timeout or a network error is a failure.
import crypto from 'node:crypto';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { WebhookConfig } from './config';
import type { AttemptResult, DueDelivery } from './queue';
import { guardedLookup, hostOf, isForbiddenAddress } from './ssrf';

/** The v1 signature of the Standard Webhooks specification. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** One keep-alive agent per configuration: deliveries to one receiver reuse their TLS connections. */
const agents = new WeakMap<WebhookConfig, https.Agent>();

function agentFor(cfg: WebhookConfig): https.Agent {
  let agent = agents.get(cfg);
  if (!agent) {
    // `ca` replaces Node's trusted roots: a configured CA is added to them, never instead of them.
    agent = new https.Agent({ keepAlive: true, maxSockets: cfg.concurrency, ...(cfg.ca ? { ca: [...tls.rootCertificates, cfg.ca] } : {}) });
    agents.set(cfg, agent);
  }
  return agent;
}

/**
 * Posts one delivery. `sentAt` is wall-clock time (receivers compare webhook-timestamp with their own clock), not the
 * service's injected clock that schedules retries.
 */
export function post(d: DueDelivery, cfg: WebhookConfig, sentAt: Date): Promise<AttemptResult> {
  const url = new URL(d.webhook_url);
  const host = hostOf(url);
  if (url.protocol !== 'https:') return Promise.resolve({ error: 'webhook_url is not https' });
  // A literal address never goes through DNS: checked here, before any connection.
  if (net.isIP(host) && isForbiddenAddress(host) && !cfg.allowedHosts.includes(host)) {
    return Promise.resolve({ error: `refused without connecting: ${host} is a loopback, private, link-local or multicast address` });
  }
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const body = Buffer.from(d.payload, 'utf8');
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = https.request(url, {
      method: 'POST',
      agent: agentFor(cfg),
      lookup: guardedLookup(cfg.allowedHosts),
      headers: {
        'content-type': 'application/json',
        'content-length': body.length,
        'user-agent': 'foncier-webhooks/1',
        'webhook-id': d.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(d.secret, d.id, timestamp, d.payload),
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ error: `no answer within ${cfg.timeoutMs} ms` });
    }, cfg.timeoutMs);
    req.on('response', (res) => {
      // The status decides; the body is read (bounded) and dropped so the connection can be reused.
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 64 * 1024) res.destroy();
      });
      res.on('end', () => done({ status: res.statusCode }));
      res.on('close', () => done({ status: res.statusCode }));
      res.on('error', () => done({ status: res.statusCode }));
    });
    req.on('error', (e: Error & { code?: string }) => done({ error: e.code === 'EFORBIDDENADDRESS' ? `refused without connecting: ${e.message}` : `${e.code ?? 'error'}: ${e.message}` }));
    req.end(body);
  });
}
