// GET /v1/bdnb/stats (5 credits): the building stock of a zone, over every BDNB building (sold or not).
// Buildings carry no postal code: code_postal answers for the département(s) of its communes, with a notice.
import { communesOfPostalCode, getCommune } from '../../../lib/geo';
import { ApiError, invalidParams } from '../../errors';
import { loadedDepartements } from '../../horizon';
import { locationFields, resolveLocation } from '../../location';
import { inseeCodeParam, round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { OLD_BEFORE, TRANCHES } from './common';

const USAGES = ['residentiel', 'tertiaire', 'mixte', 'autre'] as const;

const count = z.number().int();

export const bdnbStats = defineEndpoint({
  method: 'get',
  path: '/v1/bdnb/stats',
  tag: 'Buildings (BDNB)',
  summary: 'Building stock of a zone',
  description:
    'Every BDNB building group of the zone, sold or not. code_commune_insee and commune: commune level; code_postal: the ' +
    'département(s) of its communes (buildings have no postal code), with a notice; code_departement. Several filters combine.',
  query: z.object({
    code_commune_insee: inseeCodeParam('5-character INSEE code of the commune (2A/2B in Corsica).', { examples: ['75111'] }).optional(),
    code_postal: locationFields.code_postal,
    commune: locationFields.commune,
    code_departement: locationFields.code_departement,
  }),
  response: z.object({
    nb_batiments: count,
    nb_avec_annee: count.openapi({ description: 'Buildings with a construction year.' }),
    nb_logements_total: count,
    annee_construction_median: z.number().nullable(),
    par_tranche: z.object(Object.fromEntries(TRANCHES.map((t) => [t, count])) as Record<(typeof TRANCHES)[number], typeof count>),
    par_usage: z.object(Object.fromEntries(USAGES.map((u) => [u, count])) as Record<(typeof USAGES)[number], typeof count>),
    pct_vieux: z.number().nullable().openapi({ description: `Share (%) of the buildings with a construction year built before ${OLD_BEFORE}.` }),
    notice: z.string().optional(),
  }),
  credits: 5,
  errors: ['missing_location'],
  prepare({ query: q }) {
    if ([q.code_commune_insee, q.code_postal, q.commune, q.code_departement].every((v) => v === undefined)) {
      throw new ApiError('missing_location', 'a location filter is required: one of code_commune_insee, code_postal, commune, code_departement');
    }
    if (q.commune !== undefined && q.code_commune_insee !== undefined) throw invalidParams([{ param: 'code_commune_insee', issue: 'give commune or code_commune_insee, not both' }]);
    const where: string[] = [];
    const params: Record<string, string> = {};
    let notice: string | undefined;
    /** The zone's départements, for the coverage check; those of the postal code, for its notice. */
    let departements: string[] = [];
    let postalDeps: string[] = [];
    /** Set when the zone is exactly one whole département: its precomputed row (bdnb_stats_departements) answers. */
    let departement: string | undefined;
    const code = q.code_commune_insee?.toUpperCase();
    if (code !== undefined && !getCommune(code)) throw invalidParams([{ param: 'code_commune_insee', issue: `${code} names no commune of the reference geography` }]);
    if (code !== undefined || q.commune !== undefined || q.code_departement !== undefined) {
      // The code names its commune directly (75056 = all of Paris), as the commune parameter does.
      const loc = resolveLocation({ commune: code ?? q.commune, code_departement: q.code_departement }, { accept: ['commune', 'code_departement'] });
      where.push(loc.where);
      Object.assign(params, loc.params);
      if (loc.notices.length) notice = loc.notices.join(' ');
      departements = loc.echo.code_departement ? [loc.echo.code_departement] : [...new Set(loc.communes.map((c) => c.departement))];
      if (code === undefined && q.commune === undefined) departement = String(loc.params.loc_dep);
    }
    if (q.code_postal !== undefined) {
      const deps = [...new Set(communesOfPostalCode(q.code_postal).map((c) => c.departement))].sort();
      if (!deps.length) throw invalidParams([{ param: 'code_postal', issue: `${q.code_postal} is not a postal code of the reference geography` }]);
      where.push(`code_departement in (${deps.map((_, i) => `$cp_dep${i}`).join(', ')})`);
      deps.forEach((d, i) => (params[`cp_dep${i}`] = d));
      if (q.code_departement === undefined && deps.length === 1 && where.length === 1) departement = deps[0];
      else if (departement !== undefined && !deps.includes(departement)) departement = undefined; // an empty intersection: the scan says 0
      postalDeps = deps;
      if (!departements.length) departements = deps;
    }
    return { where: where.join(' and '), params, notice, departement, departements, postalDeps, codePostal: q.code_postal ?? null };
  },
  coverage: ({ departements }) => ({ zone: { departements }, sources: ['bdnb'] }),
  async handler({ where, params, notice: locationNotice, departement, postalDeps, codePostal }, call) {
    const { ctx } = call;
    let notice = locationNotice;
    if (codePostal !== null) {
      // Only the départements whose buildings are loaded are covered (api/horizon.ts says when none is).
      const loaded = await loadedDepartements(call, 'bdnb');
      const deps = loaded === 'all' ? postalDeps : postalDeps.filter((d) => loaded.includes(d));
      if (deps.length) {
        notice = [notice, `BDNB buildings carry no postal code: figures for code_postal ${codePostal} cover the loaded département${deps.length > 1 ? 's' : ''} ${deps.join(', ')}.`]
          .filter(Boolean).join(' ');
      }
    }
    // A whole département: one precomputed row (no row = no building, as the scan would count).
    const [r = {}] = departement !== undefined
      ? await ctx.db.query<Record<string, number | null>>('select * from bdnb_stats_departements where code_departement = $dep', { dep: departement })
      : await ctx.db.query<Record<string, number | null>>(
      `select count(*) as nb_batiments, count(annee_construction) as nb_avec_annee,
         coalesce(sum(nb_log), 0) as nb_logements_total, median(annee_construction) as annee_median,
         ${TRANCHES.map((t, i) => `count(*) filter (tranche = $t${i}) as "t_${t}"`).join(', ')},
         ${USAGES.map((u, i) => `count(*) filter (usage_principal = $u${i}) as "u_${u}"`).join(', ')},
         count(*) filter (annee_construction < ${OLD_BEFORE}) as nb_vieux
       from bdnb_batiments where ${where}`,
      { ...params, ...Object.fromEntries(TRANCHES.map((t, i) => [`t${i}`, t])), ...Object.fromEntries(USAGES.map((u, i) => [`u${i}`, u])) },
    );
    const n = (k: string) => Number(r[k] ?? 0);
    return {
      nb_batiments: n('nb_batiments'),
      nb_avec_annee: n('nb_avec_annee'),
      nb_logements_total: n('nb_logements_total'),
      annee_construction_median: round2(r.annee_median),
      par_tranche: Object.fromEntries(TRANCHES.map((t) => [t, n(`t_${t}`)])) as Record<(typeof TRANCHES)[number], number>,
      par_usage: Object.fromEntries(USAGES.map((u) => [u, n(`u_${u}`)])) as Record<(typeof USAGES)[number], number>,
      pct_vieux: n('nb_avec_annee') ? round2((100 * n('nb_vieux')) / n('nb_avec_annee')) : null,
      ...(notice ? { notice } : {}),
    };
  },
});
