// Live client of INSEE's API Sirene for GET /v1/businesses/:siren: the head office of a legal unit in one request,
// within INSEE's 30 requests/minute quota (a p-queue), a 5 s deadline, one retry on a transient 5xx and a 24 h
// cache of successful lookups. Failures are typed (RegistryError.kind) so the API maps them to its error codes
// (docs/decisions.md, "Businesses"); lib/ knows nothing of HTTP statuses of our own API.
import PQueue from 'p-queue';
import { env, parseEnv } from './env';
import { denominationOf, isPartialDiffusion, normalizeNaf, present } from './sirene';

export const DEFAULT_REGISTRY_URL = 'https://api.insee.fr/api-sirene/3.11';

export interface RegistryConfig {
  /** API Sirene base URL, without trailing slash (INSEE_SIRENE_BASE_URL). */
  baseUrl: string;
  /** Key of an application subscribed to API Sirene on portail-api.insee.fr (INSEE_SIRENE_API_KEY). INSEE's API is not
   * called without one; another base URL (a mirror, a local imitation) is called without a key when none is set. */
  apiKey?: string;
  /** Deadline of one lookup, queue wait included. */
  timeoutMs: number;
  /** INSEE's quota: requests per interval. */
  requestsPerInterval: number;
  intervalMs: number;
  /** Lookups allowed to wait for the quota; beyond, the registry is busy. */
  maxQueued: number;
  /** Pause before the one retry of a transient 5xx. */
  retryDelayMs: number;
  cacheTtlMs: number;
  cacheMaxEntries: number;
}

/** The configuration read from the environment (documented in README.md). */
export function registryConfigFromEnv(source: NodeJS.ProcessEnv = process.env): RegistryConfig {
  const e = source === process.env ? env() : parseEnv(source);
  return {
    baseUrl: e.INSEE_SIRENE_BASE_URL!.replace(/\/+$/, ''),
    apiKey: e.INSEE_SIRENE_API_KEY,
    timeoutMs: 5000,
    requestsPerInterval: 30,
    intervalMs: 60_000,
    maxQueued: 30,
    retryDelayMs: 300,
    cacheTtlMs: 24 * 3600 * 1000,
    cacheMaxEntries: 10_000,
  };
}

/** The specification's Business detail item. */
export interface BusinessDetail {
  siren: string;
  siret: string;
  denomination: string | null;
  naf_code: string | null;
  etat: string | null;
  date_creation: string | null;
  adresse: string | null;
  code_postal: string | null;
  commune: string | null;
  source: 'insee_api';
}

export type RegistryFailure = 'unavailable' | 'busy' | 'timeout' | 'not_found' | 'bad_answer';

export class RegistryError extends Error {
  constructor(
    readonly kind: RegistryFailure,
    message: string,
    /** busy: seconds after which a retry may succeed. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;
const str = (o: unknown, k: string): string | undefined => {
  const v = (o as Json | undefined)?.[k];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
};

/** The current period of an INSEE history (`dateFin` null), else the first one (INSEE lists the newest first). */
function currentPeriod(periods: unknown): Json | undefined {
  if (!Array.isArray(periods)) return undefined;
  return (periods.find((p: Json) => p && p.dateFin === null) ?? periods[0]) as Json | undefined;
}

/**
 * Maps INSEE's `etablissement` object (a `/siret` answer) to the detail item. Partial diffusion (either the unit or
 * the head office): no street address, no person's name (docs/decisions.md).
 */
export function toBusinessDetail(e: Json): BusinessDetail {
  const ul = (e.uniteLegale ?? {}) as Json;
  const addr = (e.adresseEtablissement ?? {}) as Json;
  const period = currentPeriod(e.periodesEtablissement) ?? {};
  const siret = str(e, 'siret');
  const siren = str(e, 'siren') ?? siret?.slice(0, 9);
  if (!siret || !/^\d{14}$/.test(siret) || !siren) throw new RegistryError('bad_answer', 'the registry answered an establishment without a SIRET');
  const partial = isPartialDiffusion(str(e, 'statutDiffusionEtablissement'), str(ul, 'statutDiffusionUniteLegale'));
  const street = [
    [present(str(addr, 'numeroVoieEtablissement')), present(str(addr, 'indiceRepetitionEtablissement'))].filter(Boolean).join(''),
    present(str(addr, 'typeVoieEtablissement')),
    present(str(addr, 'libelleVoieEtablissement')),
  ].filter(Boolean).join(' ');
  const naf = normalizeNaf(str(period, 'activitePrincipaleEtablissement') ?? str(ul, 'activitePrincipaleUniteLegale'));
  return {
    siren,
    siret,
    denomination: denominationOf({
      partial,
      denominationUniteLegale: str(ul, 'denominationUniteLegale'),
      denominationUsuelleEtablissement: str(period, 'denominationUsuelleEtablissement'),
      enseigne: str(period, 'enseigne1Etablissement'),
      prenom: str(ul, 'prenomUsuelUniteLegale') ?? str(ul, 'prenom1UniteLegale'),
      nom: str(ul, 'nomUsageUniteLegale') ?? str(ul, 'nomUniteLegale'),
      categorieJuridique: str(ul, 'categorieJuridiqueUniteLegale'),
    }),
    naf_code: naf ?? null,
    etat: present(str(ul, 'etatAdministratifUniteLegale')) ?? null,
    date_creation: present(str(ul, 'dateCreationUniteLegale')) ?? null,
    adresse: partial ? null : street || null,
    code_postal: present(str(addr, 'codePostalEtablissement')) ?? null,
    commune: present(str(addr, 'libelleCommuneEtablissement')) ?? null,
    source: 'insee_api',
  };
}

const TRANSIENT = new Set([500, 502, 503, 504]);

export class RegistryClient {
  private readonly queue: PQueue;
  private readonly cache = new Map<string, { value: BusinessDetail; expiresAt: number }>();
  /** Lookups waiting for the quota (not yet sent to INSEE). */
  private waiting = 0;

  constructor(
    readonly config: RegistryConfig,
    private readonly now: () => number = Date.now,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.queue = new PQueue({ intervalCap: config.requestsPerInterval, interval: config.intervalMs, carryoverConcurrencyCount: true });
  }

  get configured(): boolean {
    return Boolean(this.config.apiKey) || this.config.baseUrl !== DEFAULT_REGISTRY_URL;
  }

  private busy(why: string, retryAfterSeconds = Math.ceil(this.config.intervalMs / 1000)): RegistryError {
    return new RegistryError('busy', `the business registry is busy (${why}); retry in ${retryAfterSeconds} s`, retryAfterSeconds);
  }

  /** The head office of `siren` (already validated by the caller). */
  async lookup(siren: string): Promise<BusinessDetail> {
    if (!this.configured) throw new RegistryError('unavailable', 'the business registry is not configured on this server (no INSEE API key)');
    const cached = this.cache.get(siren);
    if (cached && cached.expiresAt > this.now()) return cached.value;
    if (cached) this.cache.delete(siren);

    if (this.waiting >= this.config.maxQueued) throw this.busy('too many lookups waiting for its quota');
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.config.timeoutMs);
    try {
      let answer = await this.attempt(siren, deadline.signal);
      if (TRANSIENT.has(answer.status)) {
        await new Promise((r) => setTimeout(r, this.config.retryDelayMs));
        answer = await this.attempt(siren, deadline.signal);
      }
      const value = this.interpret(siren, answer);
      this.remember(siren, value);
      return value;
    } finally {
      clearTimeout(timer);
    }
  }

  /** One request through the quota queue. Waiting past the deadline is "busy"; INSEE silent past it is a timeout. */
  private async attempt(siren: string, signal: AbortSignal): Promise<{ status: number; body: string; retryAfter?: string }> {
    const q = encodeURIComponent(`siren:${siren} AND etablissementSiege:true`);
    const url = `${this.config.baseUrl}/siret?q=${q}&nombre=1`;
    const timeout = () => new RegistryError('timeout', `the business registry did not answer within ${this.config.timeoutMs / 1000} s`);
    if (signal.aborted) throw timeout();
    let started = false;
    // p-queue 8 drops an aborted job only when its turn comes: count the callers really waiting ourselves.
    let waiting = true;
    const leave = () => {
      if (waiting) this.waiting--;
      waiting = false;
    };
    this.waiting++;
    const job = this.queue.add(
      async () => {
        leave();
        started = true;
        const key: Record<string, string> = this.config.apiKey ? { 'X-INSEE-Api-Key-Integration': this.config.apiKey } : {};
        const res = await this.fetchImpl(url, { headers: { ...key, Accept: 'application/json' }, signal });
        return { status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after') ?? undefined };
      },
      { signal, throwOnTimeout: true },
    );
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('deadline')), { once: true }));
    job.catch(() => undefined);
    aborted.catch(() => undefined);
    try {
      return await Promise.race([job, aborted]);
    } catch (e) {
      leave();
      if (!signal.aborted) throw new RegistryError('bad_answer', `the business registry could not be reached: ${(e as Error).message}`);
      // Still queued at the deadline: our share of INSEE's quota, not INSEE, made the caller wait.
      throw started ? timeout() : this.busy('its quota of requests per minute is used');
    }
  }

  private interpret(siren: string, a: { status: number; body: string; retryAfter?: string }): BusinessDetail {
    if (a.status === 404) throw new RegistryError('not_found', `no legal unit has SIREN ${siren} (or its head office is not diffusible)`);
    if (a.status === 429) {
      const s = Number(a.retryAfter);
      throw this.busy('INSEE answered 429', Number.isInteger(s) && s > 0 ? s : undefined);
    }
    if (a.status === 401 || a.status === 403) throw new RegistryError('unavailable', `the business registry refused this server's key (HTTP ${a.status})`);
    if (a.status !== 200) throw new RegistryError('bad_answer', `the business registry answered HTTP ${a.status}`);
    let body: Json;
    try {
      body = JSON.parse(a.body) as Json;
    } catch {
      throw new RegistryError('bad_answer', 'the business registry answered a malformed body');
    }
    const list = body?.etablissements;
    const etab = (Array.isArray(list) ? list[0] : body?.etablissement) as Json | undefined;
    if (!etab || typeof etab !== 'object') throw new RegistryError('bad_answer', 'the business registry answered without an establishment');
    const detail = toBusinessDetail(etab);
    if (detail.siren !== siren) throw new RegistryError('bad_answer', `the business registry answered SIREN ${detail.siren} for ${siren}`);
    return detail;
  }

  private remember(siren: string, value: BusinessDetail): void {
    this.cache.delete(siren);
    this.cache.set(siren, { value, expiresAt: this.now() + this.config.cacheTtlMs });
    while (this.cache.size > this.config.cacheMaxEntries) this.cache.delete(this.cache.keys().next().value!);
  }
}
