// The live registry client against a loopback HTTP server imitating INSEE's API Sirene 3.11 (`/siret?q=…`): success,
// 404, 429, a transient 500, a hang, a malformed body, the quota queue, the 24 h cache and the privacy rule.
// No test reaches the internet.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { samplesDir } from '../../lib/config';
import { RegistryClient, RegistryError, registryConfigFromEnv, type RegistryConfig } from '../../lib/registry';
import { luhnValid, sirenIssue } from '../../lib/sirene';

// DANONE's head office as the open recherche-entreprises sample shows it, written in INSEE's /siret answer shape.
const danone = (JSON.parse(fs.readFileSync(path.join(samplesDir, 'sirene', 'recherche-entreprises_search-552032534.json'), 'utf8')) as {
  result: { results: Array<Record<string, unknown>> };
}).result.results[0];
const siege = danone.siege as Record<string, string | null>;

function inseeEtablissement(over: { ul?: Record<string, unknown>; etab?: Record<string, unknown> } = {}) {
  return {
    siren: danone.siren,
    nic: String(siege.siret).slice(9),
    siret: siege.siret,
    statutDiffusionEtablissement: siege.statut_diffusion_etablissement,
    dateCreationEtablissement: siege.date_creation,
    etablissementSiege: true,
    uniteLegale: {
      etatAdministratifUniteLegale: danone.etat_administratif,
      statutDiffusionUniteLegale: danone.statut_diffusion,
      dateCreationUniteLegale: danone.date_creation,
      categorieJuridiqueUniteLegale: danone.nature_juridique,
      denominationUniteLegale: danone.nom_raison_sociale,
      activitePrincipaleUniteLegale: danone.activite_principale,
      nomUniteLegale: null,
      prenom1UniteLegale: null,
      ...over.ul,
    },
    adresseEtablissement: {
      numeroVoieEtablissement: siege.numero_voie,
      indiceRepetitionEtablissement: siege.indice_repetition,
      typeVoieEtablissement: siege.type_voie,
      libelleVoieEtablissement: siege.libelle_voie,
      codePostalEtablissement: siege.code_postal,
      libelleCommuneEtablissement: siege.libelle_commune,
      codeCommuneEtablissement: siege.commune,
    },
    periodesEtablissement: [
      { dateFin: null, dateDebut: '2025-08-19', etatAdministratifEtablissement: 'A', activitePrincipaleEtablissement: siege.activite_principale, enseigne1Etablissement: null, denominationUsuelleEtablissement: null },
      { dateFin: '2025-08-18', dateDebut: '2020-01-01', etatAdministratifEtablissement: 'A', activitePrincipaleEtablissement: '46.33Z' },
    ],
    ...over.etab,
  };
}
const answer = (etab: unknown) => JSON.stringify({ header: { statut: 200, message: 'OK', total: 1, debut: 0, nombre: 1 }, etablissements: [etab] });

// What the imitation answers, per SIREN; the requests it saw.
type Behaviour = (res: http.ServerResponse, nth: number) => void;
const behaviours = new Map<string, Behaviour>();
const seen: Array<{ url: string; key: string | undefined }> = [];
const hanging: http.ServerResponse[] = [];
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    seen.push({ url: req.url!, key: req.headers['x-insee-api-key-integration'] as string | undefined });
    const siren = /^siren:(\d{9}) AND etablissementSiege:true$/.exec(url.searchParams.get('q') ?? '')?.[1];
    const b = url.pathname === '/api-sirene/3.11/siret' && siren ? behaviours.get(siren) : undefined;
    if (!b) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ header: { statut: 404, message: 'Aucun élément trouvé' } }));
      return;
    }
    b(res, seen.filter((s) => s.url.includes(siren!)).length);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api-sirene/3.11`;
});
afterAll(async () => {
  for (const r of hanging) r.destroy();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen.length = 0;
  behaviours.clear();
});

const ok = (body: string) => (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);

function client(over: Partial<RegistryConfig> = {}, now?: () => number) {
  const config: RegistryConfig = { ...registryConfigFromEnv({ INSEE_SIRENE_API_KEY: 'test-key', INSEE_SIRENE_BASE_URL: baseUrl }), timeoutMs: 300, retryDelayMs: 10, ...over };
  return new RegistryClient(config, now);
}

async function failure(p: Promise<unknown>): Promise<RegistryError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RegistryError);
  return e as RegistryError;
}

describe('SIREN validation (before any registry call)', () => {
  it('accepts 9 digits with a valid Luhn key, La Poste included, and names what is wrong otherwise', () => {
    expect(sirenIssue('552032534')).toBeUndefined();
    expect(sirenIssue('356000000')).toBeUndefined();
    expect(sirenIssue('552032535')).toMatch(/check digit/);
    expect(sirenIssue('55203253')).toMatch(/9 digits/);
    expect(sirenIssue('55203253A')).toMatch(/9 digits/);
    // The Luhn rule written out for one number: 5 5·2 0 3·2 2 5·2 3 4 → digits 5+1+0+6+2+1+3+6… computed by hand.
    expect(luhnValid('552032534')).toBe(true);
    expect(luhnValid('552032544')).toBe(false);
  });
});

describe('registry client', () => {
  it('returns the head office as the Business detail item, sending the key in X-INSEE-Api-Key-Integration', async () => {
    behaviours.set('552032534', ok(answer(inseeEtablissement())));
    const detail = await client().lookup('552032534');
    expect(detail).toEqual({
      siren: '552032534', siret: '55203253400703', denomination: 'DANONE', naf_code: '7010Z', etat: 'A',
      date_creation: '1955-01-01', adresse: '59 RUE LA FAYETTE', code_postal: '75009', commune: 'PARIS', source: 'insee_api',
    });
    expect(seen).toHaveLength(1);
    expect(seen[0].key).toBe('test-key');
  });

  it('answers not configured without calling INSEE when no key is set', async () => {
    const c = new RegistryClient(registryConfigFromEnv({}), undefined, (() => Promise.reject(new Error('must not be called'))) as typeof fetch);
    expect(c.config.baseUrl).toBe('https://api.insee.fr/api-sirene/3.11');
    expect(c.configured).toBe(false);
    expect((await failure(c.lookup('552032534'))).kind).toBe('unavailable');
  });

  it('calls another registry URL (a mirror, an imitation) without a key when none is set', async () => {
    behaviours.set('552032534', ok(answer(inseeEtablissement())));
    const c = new RegistryClient(registryConfigFromEnv({ INSEE_SIRENE_BASE_URL: `${baseUrl}/` }));
    expect(c.configured).toBe(true);
    expect((await c.lookup('552032534')).siret).toBe('55203253400703');
    expect(seen).toEqual([{ url: expect.stringMatching(/^\/api-sirene\/3\.11\/siret\?q=/), key: undefined }]);
  });

  it('caches a successful lookup for 24 hours', async () => {
    behaviours.set('552032534', ok(answer(inseeEtablissement())));
    let t = 1_000_000;
    const c = client({}, () => t);
    await c.lookup('552032534');
    t += 24 * 3600 * 1000 - 1;
    await c.lookup('552032534');
    expect(seen).toHaveLength(1);
    t += 2;
    await c.lookup('552032534');
    expect(seen).toHaveLength(2);
  });

  it('maps 404 to not_found and does not cache it', async () => {
    const c = client();
    expect((await failure(c.lookup('441232121'))).kind).toBe('not_found');
    expect((await failure(c.lookup('441232121'))).kind).toBe('not_found');
    expect(seen).toHaveLength(2);
  });

  it('maps INSEE 429 to busy with its Retry-After', async () => {
    behaviours.set('552032534', (res) => res.writeHead(429, { 'retry-after': '7' }).end('{"fault":{"code":900802}}'));
    const e = await failure(client().lookup('552032534'));
    expect([e.kind, e.retryAfterSeconds]).toEqual(['busy', 7]);
  });

  it('retries a transient 500 once, and only once', async () => {
    behaviours.set('552032534', (res, nth) => (nth === 1 ? res.writeHead(500).end('oops') : ok(answer(inseeEtablissement()))(res)));
    expect((await client().lookup('552032534')).siret).toBe('55203253400703');
    expect(seen).toHaveLength(2);
    seen.length = 0;
    behaviours.set('821795283', (res) => res.writeHead(503).end());
    expect((await failure(client().lookup('821795283'))).kind).toBe('bad_answer');
    expect(seen).toHaveLength(2);
  });

  it('gives up at the deadline when INSEE hangs', async () => {
    behaviours.set('552032534', (res) => hanging.push(res));
    const started = performance.now();
    expect((await failure(client({ timeoutMs: 150 }).lookup('552032534'))).kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses a malformed body or an answer about another unit', async () => {
    behaviours.set('552032534', ok('{"header": {"statut": 200}, "etablissements": [{"siret": '));
    expect((await failure(client().lookup('552032534'))).kind).toBe('bad_answer');
    behaviours.set('552032534', ok(answer(inseeEtablissement({ etab: { siren: '441232121', siret: '44123212100018' } }))));
    expect((await failure(client().lookup('552032534'))).kind).toBe('bad_answer');
  });

  it('treats a refused key (401/403) as not configured', async () => {
    behaviours.set('552032534', (res) => res.writeHead(401).end());
    expect((await failure(client().lookup('552032534'))).kind).toBe('unavailable');
  });

  it('keeps to the quota: past it a lookup waits, and is busy when the wait outlasts the deadline or the queue is full', async () => {
    behaviours.set('552032534', ok(answer(inseeEtablissement())));
    behaviours.set('441232121', ok(answer(inseeEtablissement())));
    const c = client({ requestsPerInterval: 1, intervalMs: 60_000, timeoutMs: 150, maxQueued: 1 });
    await c.lookup('552032534');
    const waiting = failure(c.lookup('441232121'));
    const full = await failure(c.lookup('821795283'));
    expect([full.kind, full.retryAfterSeconds]).toEqual(['busy', 60]);
    expect((await waiting).kind).toBe('busy');
    // Neither of the refused lookups reached INSEE.
    expect(seen).toHaveLength(1);
  });
});

describe('partial diffusion in the live lookup', () => {
  it('shows a partially diffusible sole trader without name or street address', async () => {
    behaviours.set('732829320', ok(answer(inseeEtablissement({
      etab: { siren: '732829320', siret: '73282932000074', statutDiffusionEtablissement: 'P' },
      ul: { statutDiffusionUniteLegale: 'P', categorieJuridiqueUniteLegale: '1000', denominationUniteLegale: null, nomUniteLegale: '[ND]', prenom1UniteLegale: '[ND]' },
    }))));
    const d = await client().lookup('732829320');
    expect(d).toMatchObject({ siren: '732829320', denomination: null, adresse: null, code_postal: '75009', commune: 'PARIS' });
  });

  it('keeps a legal entity’s registered name when only its head office is partially diffusible', async () => {
    behaviours.set('552032534', ok(answer(inseeEtablissement({ etab: { statutDiffusionEtablissement: 'P' } }))));
    expect(await client().lookup('552032534')).toMatchObject({ denomination: 'DANONE', adresse: null });
  });
});
