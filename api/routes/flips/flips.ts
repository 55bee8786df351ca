// GET /v1/flips (10 credits, cached 24 h): fast resales (18–24 months) of one commune, read from the flips_communes
// mart (rules in marts/models/marts/flips.sql and docs/decisions.md, "Flips").
import { getCommune, type Commune } from '../../../lib/geo';
import { ApiError, invalidParams } from '../../errors';
import { dvfName } from '../../location';
import { enumParam, inseeCodeParam, round2, z } from '../../params';
import { defineEndpoint } from '../../platform';

const FLIPS_CREDITS = 10;
const WINDOW_MONTHS = 24;
const inseeParam = (description: string, example?: string) => inseeCodeParam(description, example ? { example } : undefined).optional();

const query = z.object({
  code_insee: inseeParam(
    'INSEE code of the commune; required unless code_commune is given. An arrondissement (75101–75120, 69381–69389, ' +
      '13201–13216) is one zone; 75056, 69123 and 13055 mean the whole city (all its arrondissements). A former code ' +
      'of a merged commune means the commune nouvelle.',
    '33063',
  ),
  code_commune: inseeParam('Legacy alias of code_insee; when both are given they must be equal.'),
  type_local: enumParam(['Maison', 'Appartement'], 'Maison (default). Appartement answers available false and costs no credit.').default('Maison'),
});

const response = z.object({
  code_insee: z.string(),
  commune: z.string().openapi({ description: 'Commune name, upper case as in DVF.' }),
  periode: z.object({
    date_debut: z.string().nullable(),
    date_fin: z.string().nullable().openapi({ description: 'Date of the latest DVF sale of the commune; null when it has none.' }),
    mois: z.number().int(),
  }),
  type_local: z.enum(['Maison', 'Appartement']),
  transactions_revente: z.number().int().nullable().openapi({ description: 'Clean sales (neither bulk nor outlier) of the type in the window: the denominator.' }),
  flips_detectes: z.number().int().nullable().openapi({ description: 'Resales in the window of a property bought 18 to 24 months before.' }),
  taux_de_flip: z.number().nullable().openapi({ description: 'flips_detectes / transactions_revente × 100; null without sales.' }),
  marge_brute_mediane: z.number().nullable().openapi({ description: 'Median of resale price minus purchase price, euros.' }),
  marge_mediane_pct: z.number().nullable().openapi({ description: 'Median of the gross margin as a percentage of the purchase price.' }),
  duree_detention_mediane_jours: z.number().nullable(),
  methodes_detection: z
    .object({ cadastre: z.number().int(), adresse_surface: z.number().int() })
    .nullable()
    .openapi({ description: 'Flips per detection method; a pair found by both counts under cadastre.' }),
  available: z.boolean(),
  message: z.string().optional().openapi({ description: 'Why the figures are not available.' }),
  notice: z.string().optional(),
  filters: z.object({ code_insee: z.string(), type_local: z.string() }),
});

interface Row {
  date_debut: string;
  date_fin: string;
  transactions_revente: number;
  flips_detectes: number;
  flips_cadastre: number;
  flips_adresse_surface: number;
  marge_brute_mediane: number | null;
  marge_mediane_pct: number | null;
  duree_detention_mediane_jours: number | null;
}

/** The commune a code names: a current commune, an arrondissement, or the commune nouvelle of a former code. */
function communeOf(code: string, param: string, notices: string[]): Commune {
  const commune = getCommune(code);
  if (!commune) throw invalidParams([{ param, issue: `no commune has the INSEE code ${code}` }]);
  if (commune.code !== code) {
    notices.push(`${code} is a former commune code: the figures cover the commune it belongs to now, ${commune.code} (${dvfName(commune.nom)}).`);
  }
  return commune;
}

export const flips = defineEndpoint({
  method: 'get',
  path: '/v1/flips',
  tag: 'Market statistics',
  summary: 'Fast resales of a commune',
  description:
    `${FLIPS_CREDITS} credits for Maison; type_local=Appartement answers available false for 0 credits. ` +
    'A flip is a clean sale of one house (or flat) resold between 18 and 24 calendar months later (resale date from the ' +
    'purchase date + 18 months to + 24 months, inclusive). The same property is recognised by its cadastral reference ' +
    '(same parcel and lot, or same parcel and built surface without a lot) or by its address, type and built surface ' +
    'within ±20 % (same cadastral section, no conflicting lot). Bulk and outlier sales, and sales of several lots of the ' +
    'type, never match. The 24-month window ends at the latest DVF sale of the commune; a flip counts in the window of ' +
    'its resale. Figures are aggregated per commune, never per property.',
  query,
  response,
  credits: ({ query: q }) => (q.type_local === 'Appartement' ? 0 : FLIPS_CREDITS),
  cacheTtlSeconds: 24 * 3600,
  errors: ['missing_location'],
  prepare({ query: q }) {
    if (q.code_insee === undefined && q.code_commune === undefined) {
      throw new ApiError('missing_location', 'code_insee (or its alias code_commune) is required: the INSEE code of the commune');
    }
    const insee = q.code_insee?.toUpperCase();
    const alias = q.code_commune?.toUpperCase();
    if (insee !== undefined && alias !== undefined && insee !== alias) {
      throw invalidParams([{ param: 'code_commune', issue: `alias of code_insee: must equal it (${insee}) when both are given` }]);
    }
    const notices: string[] = [];
    const commune = communeOf((insee ?? alias)!, insee !== undefined ? 'code_insee' : 'code_commune', notices);
    return { code: commune.code, departement: commune.departement, name: dvfName(commune.nom), typeLocal: q.type_local as 'Maison' | 'Appartement', notices };
  },
  coverage: ({ departement }) => ({ zone: { departements: [departement] }, sources: ['dvf'] }),
  async handler(p, call) {
    const base = { code_insee: p.code, commune: p.name, type_local: p.typeLocal, filters: { code_insee: p.code, type_local: p.typeLocal } };
    if (p.typeLocal === 'Appartement') {
      return {
        ...base,
        periode: { date_debut: null, date_fin: null, mois: WINDOW_MONTHS },
        ...nullFigures,
        available: false,
        message: 'Flip figures are published for houses only (type_local=Maison); this answer charged no credit.',
        ...notice(p.notices),
      };
    }
    const [row] = await call.ctx.db.query<Row>(
      `select strftime(date_debut, '%Y-%m-%d') as date_debut, strftime(date_fin, '%Y-%m-%d') as date_fin, transactions_revente,
         flips_detectes, flips_cadastre, flips_adresse_surface, marge_brute_mediane, marge_mediane_pct, duree_detention_mediane_jours
       from flips_communes where code_insee = $code and type_local = $type`,
      { code: p.code, type: p.typeLocal },
    );
    if (!row) {
      return {
        ...base,
        periode: { date_debut: null, date_fin: null, mois: WINDOW_MONTHS },
        ...nullFigures,
        transactions_revente: 0,
        flips_detectes: 0,
        methodes_detection: { cadastre: 0, adresse_surface: 0 },
        available: true,
        ...notice([...p.notices, `No DVF sale is recorded in ${p.name} (${p.code}): there is no window to search.`]),
      };
    }
    const empty = row.transactions_revente === 0 ? [`No clean ${p.typeLocal} sale in ${p.name} between ${row.date_debut} and ${row.date_fin}.`] : [];
    return {
      ...base,
      periode: { date_debut: row.date_debut, date_fin: row.date_fin, mois: WINDOW_MONTHS },
      transactions_revente: row.transactions_revente,
      flips_detectes: row.flips_detectes,
      taux_de_flip: row.transactions_revente > 0 ? round2((row.flips_detectes / row.transactions_revente) * 100) : null,
      marge_brute_mediane: round2(row.marge_brute_mediane),
      marge_mediane_pct: round2(row.marge_mediane_pct),
      duree_detention_mediane_jours: round2(row.duree_detention_mediane_jours),
      methodes_detection: { cadastre: row.flips_cadastre, adresse_surface: row.flips_adresse_surface },
      available: true,
      ...notice([...p.notices, ...empty]),
    };
  },
});

const nullFigures = {
  transactions_revente: null,
  flips_detectes: null,
  taux_de_flip: null,
  marge_brute_mediane: null,
  marge_mediane_pct: null,
  duree_detention_mediane_jours: null,
  methodes_detection: null,
};

function notice(notices: string[]): { notice?: string } {
  return notices.length ? { notice: notices.join(' ') } : {};
}
