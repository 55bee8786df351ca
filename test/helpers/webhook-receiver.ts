// A local HTTPS webhook receiver for the tests (loopback only), with a self-signed certificate (`selfsigned`) the test
// hands to the service as a trusted CA. Each path behaves as told: ok (204), fail (500), hang (never answers), gone
// (410). Every request is verified with the `standardwebhooks` package against the secret of its alert.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import selfsigned from 'selfsigned';
import { Webhook } from 'standardwebhooks';

export type Mode = 'ok' | 'fail' | 'hang' | 'gone';

export interface Received {
  path: string;
  id: string;
  timestamp: string;
  payload: { event: string; alert_id: string; delivery_id: string; created_at: string; transaction: Record<string, unknown> & { id: string } };
  /** undefined when the signature verified; the library's error otherwise. */
  verifyError?: string;
}

export interface Receiver {
  url: string;
  /** PEM of the receiver's certificate, to trust. */
  ca: string;
  received: Received[];
  /** Secrets by alert id, for verification. */
  secrets: Map<string, string>;
  modes: Map<string, Mode>;
  /** When set, decides every answer instead of the modes: `respond(status, onAcknowledged)` answers, and calls
   * onAcknowledged once the answer was written to a live connection (the sender could read it). */
  onRequest?: (id: string, respond: (status: number, onAcknowledged: () => void) => void) => void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const modes = new Map<string, Mode>();
  const sockets = new Set<Socket>();
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const payload = JSON.parse(body) as Received['payload'];
      const headers = { 'webhook-id': String(req.headers['webhook-id']), 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) };
      let verifyError: string | undefined;
      try {
        new Webhook(secrets.get(payload.alert_id) ?? 'whsec_' + Buffer.alloc(32).toString('base64')).verify(body, headers);
      } catch (e) {
        verifyError = (e as Error).message;
      }
      const path = req.url ?? '/';
      received.push({ path, id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], payload, verifyError });
      if (self.onRequest) {
        return self.onRequest(headers['webhook-id'], (status, onAcknowledged) => {
          if (res.socket?.destroyed || !res.socket?.writable) return;
          res.on('finish', onAcknowledged);
          res.statusCode = status;
          res.end();
        });
      }
      const mode = modes.get(path) ?? (path.slice(1) as Mode);
      if (mode === 'hang') return;
      res.statusCode = mode === 'ok' ? 204 : mode === 'gone' ? 410 : 500;
      res.end();
    });
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const self: Receiver = {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: pems.cert,
    received,
    secrets,
    modes,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return self;
}
