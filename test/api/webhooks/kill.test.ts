// SIGKILL of the API server while deliveries are in flight: after a restart, no pending delivery is lost and none that
// the receiver acknowledged is sent again. The server is a real child process (api/server.ts) over a data folder whose
// queue was filled by the scan; the receiver holds its answers from some point on, so deliveries are in flight (sent,
// not answered) when the process is killed.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { closeContext, createContext } from '../../../api/context';
import { createLogger } from '../../../api/log';
import type { Call } from '../../../api/platform';
import { insertAlert, newSigningSecret } from '../../../api/routes/alerts/common';
import { scanSince } from '../../../api/webhooks/scan';
import { repoRoot } from '../../../lib/config';
import { testData } from '../../helpers/data';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { sqliteState } from '../../helpers/state';

let receiver: Receiver | undefined;
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await receiver?.close();
});

function startServerProcess(dataRoot: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `import(${JSON.stringify(path.join(repoRoot, 'api/server.ts'))}).then((m) => m.startServer(0)).then(() => console.log('LISTENING'))`],
    { cwd: repoRoot, env: { ...process.env, DATA_DIR: dataRoot, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('LISTENING')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`server exited ${code}:\n${out}`)));
  });
}

const until = async (cond: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; !cond(); ) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
};

it('loses no pending delivery and sends no acknowledged one twice across a SIGKILL', async () => {
  receiver = await startReceiver();
  const dataRoot = await testData('sample', { writable: true });
  const caFile = path.join(dataRoot, 'receiver-ca.pem');
  fs.writeFileSync(caFile, receiver.ca);

  // The queue, filled by the real scan over everything served, before the server starts.
  const ctx = createContext({ dataRoot, logger: createLogger({ level: 'silent' }) });
  await ctx.db.start();
  const keyRecord = sqliteState(ctx).keys.findByIdNow(sqliteState(ctx).keys.createKeyNow({ plan: 'Enterprise' }).id)!;
  const call: Call = { ctx, key: keyRecord, now: ctx.clock.now(), requestId: 'kill-test' };
  for (const criteria of [{ code_postal: '33230' }, { code_departement: '01' }, { code_departement: '01', type_local: 'Maison' as const }, { code_postal: '33230', prix_min: 50_000 }]) {
    const secret = newSigningSecret();
    const alert = await insertAlert(call, { webhook_url: `${receiver.url}/ok`, ...criteria }, secret);
    receiver.secrets.set(alert.id, secret);
  }
  const { enqueued } = await scanSince(ctx, new Date(0));
  await closeContext(ctx);
  expect(enqueued).toBeGreaterThan(150);

  // Answers the first 40 at once, then holds every answer: those deliveries are in flight when the server dies.
  const acknowledged: string[] = [];
  let answered = 0;
  let held = 0;
  let holding = true;
  const pending: Array<() => void> = [];
  receiver.onRequest = (id, respond) => {
    if (holding && answered >= 40) {
      held++;
      pending.push(() => respond(204, () => acknowledged.push(id)));
      return;
    }
    answered++;
    respond(204, () => acknowledged.push(id));
  };

  const env = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_CA_FILE: caFile, WEBHOOK_LEASE_MS: '1500', WEBHOOK_CONCURRENCY: '8' };
  const first = await startServerProcess(dataRoot, env);
  await until(() => held >= 8, 30_000);
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  holding = false;
  await new Promise((r) => setTimeout(r, 300));
  // The held requests' connections died with the server: answering them now reaches nobody.
  for (const p of pending) p();
  const ackBeforeRestart = acknowledged.length;
  expect(ackBeforeRestart).toBeGreaterThanOrEqual(40);
  expect(ackBeforeRestart).toBeLessThan(enqueued);

  const second = await startServerProcess(dataRoot, env);
  await until(() => new Set(acknowledged).size >= enqueued, 60_000);
  // A little longer, to see any delivery sent again.
  await new Promise((r) => setTimeout(r, 1500));
  second.kill('SIGTERM');
  await new Promise((r) => second.once('exit', r));

  expect(new Set(acknowledged).size).toBe(enqueued); // 0 lost
  expect(acknowledged.length).toBe(enqueued); // 0 acknowledged twice
  expect(receiver.received.every((r) => r.verifyError === undefined)).toBe(true);
  // The ones that were in flight were sent again after the restart, with their own webhook-id.
  const sent = new Map<string, number>();
  for (const r of receiver.received) sent.set(r.id, (sent.get(r.id) ?? 0) + 1);
  expect([...sent.values()].filter((n) => n > 1).length).toBeGreaterThanOrEqual(8);

  const state = sqliteState(createContext({ dataRoot, logger: createLogger({ level: 'silent' }) }));
  expect(state.db.prepare(`select status, count(*) as n from alert_deliveries group by status`).all()).toEqual([{ status: 'succeeded', n: enqueued }]);
  await state.close();
}, 180_000);
