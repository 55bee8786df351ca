// Demo income and rent files, in the real published formats, for the demo's communes: an INSEE Filosofi commune file
// (`cc_filosofi_2021_COM.csv`, with the whole-city lines of Paris and Lyon and one commune under statistical secrecy)
// and the four ANIL rent files of the 2024 edition (`2024/pred-*-mef-dhup.csv`, Windows-1252, CRLF, decimal commas).
// Deterministic: values are functions of each commune's price level.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COMMUNES, type Commune } from './generate';

export const DEMO_FILOSOFI_YEAR = 2021;
export const DEMO_ANIL_YEAR = 2024;
/** Crozant: its median income is under statistical secrecy (`s`), as for ~3,600 small communes in the real file. */
const DEMO_SECRET_COMMUNE = '23070';

const FILOSOFI_COLUMNS = ['CODGEO', 'NBMENFISC', 'NBPERSMENFISC', 'MED', 'PIMP', 'TP60', 'TP60AGE1', 'TP60AGE2', 'TP60AGE3',
  'TP60AGE4', 'TP60AGE5', 'TP60AGE6', 'TP60TOL1', 'TP60TOL2', 'PACT', 'PTSA', 'PCHO', 'PBEN', 'PPEN', 'PPAT', 'PPSOC',
  'PPFAM', 'PPMINI', 'PPLOGT', 'PIMPOT', 'D1', 'D9', 'RD'];

const ANIL_HEADER = 'id_zone;INSEE_C;LIBGEO;EPCI;DEP;REG;loypredm2;lwr.IPm2;upr.IPm2;TYPPRED;nbobs_com;nbobs_mail;R2_adj';
const EPCI: Record<string, string> = { '69': '200046977', '75': '200054781', '33': '243300316', '23': '200034379' };
const REGION: Record<string, string> = { '69': '84', '75': '11', '33': '75', '23': '75' };

const round10 = (v: number) => Math.round(v / 10) * 10;
const frenchDecimal = (v: number, digits = 13) => v.toFixed(digits).replace('.', ',');

/** Median disposable income per consumption unit of a demo commune: higher where property is dearer. */
function demoIncome(c: Pick<Commune, 'aptPpm2'>): number {
  return round10(15_000 + 1.9 * c.aptPpm2);
}

interface FilosofiLine {
  code: string;
  households: number;
  /** Median income per consumption unit, or 's' (statistical secrecy). */
  med: number | 's';
}

/** A Filosofi commune file (`cc_filosofi_<year>_COM.csv`) in the published layout: 28 columns suffixed by the year. */
export function filosofiCsv(year: number, lines: FilosofiLine[]): string {
  const yy = String(year).slice(2);
  const header = FILOSOFI_COLUMNS.map((c) => (c === 'CODGEO' ? c : `${c}${yy}`));
  return [header.join(';'), ...lines.map((l) => filosofiLine(l.code, l.households, l.med)).sort()].join('\n') + '\n';
}

function filosofiLine(code: string, households: number, med: number | 's'): string {
  const pct = (v: number) => frenchDecimal(v, 1);
  const detail = med === 's'
    ? Array(FILOSOFI_COLUMNS.length - 4).fill('s')
    : [pct(60), pct(14), pct(19), pct(15), pct(14), pct(13), pct(12), pct(9), pct(6), pct(21), pct(75.4), pct(66.1), pct(3.8),
      pct(5.5), pct(24.2), pct(9.8), pct(5.1), pct(1.3), pct(2.4), pct(1.4), pct(-16.7), String(round10(med * 0.5)), String(round10(med * 2.1)), pct(4.2)];
  return [code, String(households), String(Math.round(households * 1.9)), String(med), ...detail].join(';');
}

function filosofiFile(): string {
  const communes = [...COMMUNES].sort((a, b) => a.code.localeCompare(b.code));
  const lines: FilosofiLine[] = communes.map((c) => ({ code: c.code, households: c.volume * 40, med: c.code === DEMO_SECRET_COMMUNE ? 's' : demoIncome(c) }));
  // Whole cities (75056, 69123) have their own line, as in the real file: household-weighted mean of their arrondissements.
  for (const [city, dep] of [['69123', '69'], ['75056', '75']]) {
    const arr = communes.filter((c) => c.dep === dep);
    const households = arr.reduce((a, c) => a + c.volume * 40, 0);
    lines.push({ code: city, households, med: round10(arr.reduce((a, c) => a + demoIncome(c) * c.volume * 40, 0) / households) });
  }
  return filosofiCsv(DEMO_FILOSOFI_YEAR, lines);
}

export type Segment = 'app' | 'app12' | 'app3' | 'mai';
export const SEGMENTS: Segment[] = ['app', 'app12', 'app3', 'mai'];
const SEGMENT_FACTOR: Record<Segment, number> = { app: 1, app12: 1.15, app3: 0.9, mai: 1 };

/** Predicted rent per m² (charges included) of a demo commune and segment. */
function demoRent(c: Commune, segment: Segment): number {
  return segment === 'mai' ? 4 + 0.0022 * c.housePpm2 : (5 + 0.0024 * c.aptPpm2) * SEGMENT_FACTOR[segment];
}

interface AnilLine {
  zone: string; code: string; name: string; epci: string; dep: string; region: string;
  rent: number; coarse: boolean; observations: number; r2: number;
}

/** An ANIL rent file (`pred-*-mef-dhup.csv`) in the published layout: CRLF, decimal commas, dotted column names. */
export function anilCsv(lines: AnilLine[]): string {
  const rows = lines.map((l) => [l.zone, l.code, l.name, l.epci, l.dep, l.region, frenchDecimal(l.rent), frenchDecimal(l.rent * 0.72),
    frenchDecimal(l.rent * 1.35), l.coarse ? 'maille' : 'commune', String(l.observations), String(l.observations + 400), frenchDecimal(l.r2, 15)].join(';'));
  return [ANIL_HEADER, ...rows].join('\r\n') + '\r\n';
}

function anilFile(segment: Segment): string {
  return anilCsv([...COMMUNES].sort((a, b) => a.code.localeCompare(b.code)).map((c, i) => {
    // Villages and Paris houses are predicted at the coarser "maille" level with few listings, as in the real files.
    const coarse = (c.rural && c.volume < 50) || (segment === 'mai' && c.dep === '75');
    return {
      zone: String(1000 + i * 7 + (coarse ? 0 : 3)), code: c.code, name: c.name, epci: EPCI[c.dep], dep: c.dep, region: REGION[c.dep],
      rent: demoRent(c, segment), coarse, observations: coarse ? 8 + (i % 15) : 40 + c.volume * 2,
      r2: c.code === '23001' ? 0.42 + (i % 3) / 100 : 0.68 + (i % 7) / 100,
    };
  }));
}

export async function generateIncome(outDir: string): Promise<{ files: string[] }> {
  const files = [`cc_filosofi_${DEMO_FILOSOFI_YEAR}_COM.csv`];
  await writeFile(join(outDir, files[0]), filosofiFile());
  await mkdir(join(outDir, String(DEMO_ANIL_YEAR)), { recursive: true });
  for (const segment of SEGMENTS) {
    const rel = `${DEMO_ANIL_YEAR}/pred-${segment}-mef-dhup.csv`;
    // Latin-1 bytes are Windows-1252 for every character of the demo's names (no Œ, ’ or €).
    await writeFile(join(outDir, rel), Buffer.from(anilFile(segment), 'latin1'));
    files.push(rel);
  }
  return { files };
}
