// Key administration CLI over the state: DATA_DIR/api.sqlite, or PostgreSQL when DATABASE_URL is set. Create (prints
// the key once), list, revoke, top up, roll (a new secret for the same key).
import { parseArgs } from 'node:util';
import { systemClock } from '../api/clock';
import { MAX_ROLL_GRACE_MS, openStore, PLAN_NAMES, PLANS, type PlanName, type StateStore } from '../api/store';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

const USAGE = `Usage: npm run keys -- <command>
  create --plan <${PLAN_NAMES.join('|')}> [--label <text>] [--credits <n>]
         Prints the new key alone on the last line of stdout (details go to stderr); it is never shown again.
         --credits sets this month's balance instead of the plan's allotment.
  list
  revoke <id|prefix>
  topup <id|prefix> <credits>
  roll <id|prefix> [--grace-hours <0-168>]
         A new secret for the same key (id, plan, credits, portfolio, alerts, history), printed alone on the last line
         of stdout; the old secret keeps working for --grace-hours (default 0: it stops at once).
The database is PostgreSQL when DATABASE_URL is set, else DATA_DIR/api.sqlite (DATA_DIR defaults to ./data).`;

class UsageError extends Error {}

function parsePlan(raw: string | undefined): PlanName {
  if (raw === undefined) throw new UsageError(`--plan is required (${PLAN_NAMES.join(', ')})`);
  // Case-insensitive because `--plan scale` is an obvious intent, not a typo worth an error.
  const plan = PLAN_NAMES.find((p) => p.toLowerCase() === raw.toLowerCase());
  if (!plan) throw new UsageError(`unknown plan "${raw}" (plans: ${PLAN_NAMES.join(', ')})`);
  return plan;
}

function parseCredits(raw: string | undefined, what: string, allowZero: boolean): number {
  if (raw === undefined) throw new UsageError(`${what} is required`);
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < (allowZero ? 0 : 1)) {
    throw new UsageError(`${what} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got "${raw}"`);
  }
  return n;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** The key operations, on either engine. */
type KeyAdmin = Pick<StateStore['keys'], 'createKey' | 'listKeys' | 'revoke' | 'topup' | 'roll'> & Pick<StateStore['credits'], 'balance'> & { close(): Promise<void> };

/** The state as openStore() chooses it (PostgreSQL when DATABASE_URL is set), with few connections. */
async function openAdmin(): Promise<KeyAdmin> {
  const state = openStore({ clock: systemClock, poolSize: 2 });
  await state.ready();
  const { keys, credits } = state;
  return {
    createKey: (o) => keys.createKey(o),
    listKeys: () => keys.listKeys(),
    revoke: (r) => keys.revoke(r),
    topup: (r, n) => keys.topup(r, n),
    roll: (r, ms) => keys.roll(r, ms),
    balance: (id) => credits.balance(id),
    close: () => state.close(),
  };
}

async function run(argv: string[], store: KeyAdmin): Promise<void> {
  // revoke and topup take positionals only; parsing them by hand lets `topup <id> -5` reach the credits check.
  const positionalOnly = argv[0] === 'revoke' || argv[0] === 'topup';
  const { values, positionals } = positionalOnly
    ? { values: {} as { plan?: string; label?: string; credits?: string; 'grace-hours'?: string }, positionals: argv }
    : parseArgs({
        args: argv,
        allowPositionals: true,
        options: { plan: { type: 'string' }, label: { type: 'string' }, credits: { type: 'string' }, 'grace-hours': { type: 'string' } },
      });
  const [command, ...rest] = positionals;
  const credits = store;

  switch (command) {
    case 'create': {
      const plan = parsePlan(values.plan);
      const balance = values.credits === undefined ? undefined : parseCredits(values.credits, '--credits', true);
      const { id, key } = await store.createKey({ plan, label: values.label ?? '', balance });
      const b = (await credits.balance(id))!;
      process.stderr.write(
        `Created ${id} (${plan}${values.label ? `, "${values.label}"` : ''}): ${fmt(b.remaining)} credits until ${b.resetsOn}, ` +
          `then ${fmt(PLANS[plan].monthly)} a month. Store the key now: it cannot be shown again.\n`,
      );
      // Alone on stdout, so `KEY=$(npm run -s keys -- create ...)` captures exactly the key.
      process.stdout.write(`${key}\n`);
      return;
    }
    case 'list': {
      const keys = await store.listKeys();
      const balances = await Promise.all(keys.map((k) => credits.balance(k.id)));
      if (keys.length === 0) {
        process.stdout.write('No keys.\n');
        return;
      }
      const rows = keys.map((k, i) => {
        const b = balances[i]!;
        return [
          k.id,
          k.prefix,
          k.label,
          k.plan,
          k.isActive ? 'yes' : `no (${k.revokedAt?.slice(0, 10)})`,
          fmt(b.monthly),
          fmt(b.topup),
          k.createdAt.slice(0, 16).replace('T', ' '),
        ];
      });
      process.stdout.write(table(['id', 'prefix', 'label', 'plan', 'active', 'balance', 'top-up', 'created (UTC)'], rows) + '\n');
      return;
    }
    case 'revoke': {
      if (rest.length !== 1) throw new UsageError('revoke takes one argument: the key id or prefix');
      const { key, alreadyRevoked } = await store.revoke(rest[0]);
      process.stdout.write(
        alreadyRevoked ? `${key.id} was already revoked on ${key.revokedAt}.\n` : `Revoked ${key.id} (${key.prefix}…, ${key.plan}).\n`,
      );
      return;
    }
    case 'topup': {
      if (rest.length !== 2) throw new UsageError('topup takes two arguments: the key id or prefix, and a number of credits');
      const n = parseCredits(rest[1], 'credits', false);
      const key = await store.topup(rest[0], n);
      const b = (await credits.balance(key.id))!;
      process.stdout.write(`Added ${fmt(n)} credits to ${key.id}: top-up ${fmt(b.topup)}, ${fmt(b.remaining)} available in total.\n`);
      return;
    }
    case 'roll': {
      if (rest.length !== 1) throw new UsageError('roll takes one argument: the key id or prefix');
      const hours = values['grace-hours'] === undefined ? 0 : parseCredits(values['grace-hours'], '--grace-hours', true);
      if (hours > MAX_ROLL_GRACE_MS / 3_600_000) throw new UsageError(`--grace-hours must be at most ${MAX_ROLL_GRACE_MS / 3_600_000} (7 days), got ${hours}`);
      const { key, secret } = await store.roll(rest[0], hours * 3_600_000);
      const old = key.previousSecret;
      process.stderr.write(
        `Rolled ${key.id} (${key.plan}): ${old ? `the old secret ${old.prefix}… works until ${old.expiresAt}` : 'the old secret stopped at once'}. ` +
          'Store the new one now: it cannot be shown again.\n',
      );
      process.stdout.write(`${secret}\n`);
      return;
    }
    case undefined:
      throw new UsageError('a command is required');
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function main(): Promise<number> {
  let store: KeyAdmin | undefined;
  try {
    const argv = process.argv.slice(2);
    if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    store = await openAdmin();
    await run(argv, store);
    return 0;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    if (err instanceof UsageError || (err instanceof TypeError && 'code' in err)) process.stderr.write(`\n${USAGE}\n`);
    return 1;
  } finally {
    await store?.close();
  }
}

process.exitCode = await main();
