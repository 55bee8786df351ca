// The zone statistics of `ventes` answered from memory: a columnar copy of the few columns they read (type, cleaning
// flags, date, zone ids, price, €/m², surface: 31 bytes a sale, about 0.6 GB for 20 M sales, plus the sorted blocks of a
// département's measures, 0.5 GB), loaded once per serving file. A postal code's or commune's sales are a list of row
// numbers sorted by date: the window is two binary searches, the rest a scan of a few thousand rows and a selection for
// the medians (tens of microseconds, against 4–5 ms of DuckDB reading whole row groups). A département's are blocks of
// one month, type and flag combination, each measure sorted within its block: a window is the full months' blocks plus
// the partial months' rows, and its medians a selection across sorted blocks (no copy of the hundreds of thousands of
// values). Every figure equals the SQL path's (marketStats in filter.ts), which stays the path for radius searches and
// for a serving file whose copy is not loaded yet (test/api/stats/market-memory.test.ts compares them).
import type { DuckDBConnection, DuckDBVector } from '@duckdb/node-api';
import { all, type Params } from '../../lib/duck';
import { fillSql, readSql } from '../../lib/sql-file';

/** The sale types, in the order of their code in memory-rows.sql and memory-values.sql. */
export const SALE_TYPES = ['Maison', 'Appartement', 'Local commercial', 'Dépendance', 'Terrain'] as const;
const TYPE_BITS = 7;
/** The cleaning flags as memory-values.sql numbers them (memory-rows.sql stores them shifted left by 3). */
const BULK = 1;
const OUTLIER = 2;
const VEFA = 4;
const FLAG_COMBINATIONS = 8;
const NO_POSTAL_CODE = 65535;
const DAY_MS = 86_400_000;

/** Median, mean, min and max of one measure, unrounded; null over no value. */
export interface MeasureStats {
  median: number | null;
  avg: number | null;
  min: number | null;
  max: number | null;
}

export interface ZoneStats {
  count: number;
  price: MeasureStats;
  price_per_m2: MeasureStats;
  surface: MeasureStats;
}

/** A zone as the memory index reads it: the conjunction of the codes given (at least one). */
export interface ZoneQuery {
  /** The départements the sales must be in (the SQL filter's département conditions, intersected). */
  departements?: string[];
  code_postal?: string;
  /** code_commune_actuel values (a commune name resolves to one or more). */
  communes?: string[];
  types: readonly string[];
  date_debut: string;
  date_fin: string;
  exclude_bulk_sales: boolean;
  exclude_outliers: boolean;
  exclude_vefa: boolean;
}

/** One measure sorted within each département × month × type × flags block. */
interface Blocks {
  values: Float64Array;
  /** Offset of each block in `values`, and the end (length blocks + 1). */
  start: Int32Array;
  sum: Float64Array;
}

/** A sorted run of values: a block, or the sorted values of a window's partial months. */
interface Run {
  a: Float64Array;
  lo: number;
  hi: number;
}

const MEASURES = ['price', 'm2', 'surface'] as const;
type Measure = (typeof MEASURES)[number];
const MEASURE_SQL: Record<Measure, { value: string; condition: string }> = {
  price: { value: 'v.valeur_fonciere', condition: 'true' },
  m2: { value: 'v.prix_m2', condition: 'v.prix_m2 is not null' },
  surface: { value: 'v.surface_reelle_bati', condition: 'v.surface_reelle_bati > 0' },
};

const ROWS_SQL = readSql(import.meta.url, 'memory-rows.sql');
const VALUES_SQL = readSql(import.meta.url, 'memory-values.sql');

const dayOf = (iso: string): number => Math.round(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);
const monthOfDay = (day: number): number => {
  const d = new Date(day * DAY_MS);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
};
const firstDayOfMonth = (m: number): number => Date.UTC(Math.floor(m / 12), m % 12, 1) / DAY_MS;

export class SalesIndex {
  private constructor(
    /** Rows sorted by département then date. */
    private readonly day: Uint16Array,
    private readonly tf: Uint8Array,
    private readonly price: Float64Array,
    private readonly m2: Float64Array,
    private readonly surface: Float64Array,
    private readonly depOf: Uint8Array,
    private readonly cpOf: Uint16Array,
    private readonly communeOf: Uint16Array,
    private readonly deps: Map<string, number>,
    private readonly depStart: Int32Array,
    private readonly cps: Map<string, number>,
    private readonly cpStart: Int32Array,
    private readonly cpRows: Int32Array,
    private readonly communes: Map<string, number>,
    private readonly communeStart: Int32Array,
    private readonly communeRows: Int32Array,
    private readonly firstMonth: number,
    private readonly months: number,
    private readonly blocks: Record<Measure, Blocks>,
  ) {}

  get rows(): number {
    return this.day.length;
  }

  /** Bytes held by the typed arrays (what the copy costs in memory). */
  get bytes(): number {
    const arrays = [this.day, this.tf, this.price, this.m2, this.surface, this.depOf, this.cpOf, this.communeOf, this.depStart, this.cpStart, this.cpRows, this.communeStart, this.communeRows];
    for (const b of Object.values(this.blocks)) arrays.push(b.values, b.start, b.sum);
    return arrays.reduce((s, a) => s + a.byteLength, 0);
  }

  /** Reads `ventes` through `conn` (a few sorted scans: seconds for 20 M sales). */
  static async load(conn: DuckDBConnection): Promise<SalesIndex> {
    const codes = async (col: string, where = 'true') =>
      (await all<{ c: string }>(conn, `select distinct ${col} as c from ventes where ${where} order by c`)).map((r) => r.c);
    const [depCodes, cpCodes, communeCodes] = [await codes('code_departement'), await codes('code_postal', 'code_postal is not null'), await codes('code_commune_actuel')];
    if (cpCodes.length >= NO_POSTAL_CODE || communeCodes.length > 65536 || depCodes.length > 256) throw new Error('too many zones for the in-memory sales index');
    const [span] = await all<{ n: number; first: number | null; last: number | null }>(
      conn,
      `select count(*)::INTEGER as n, min(year(date_mutation) * 12 + month(date_mutation) - 1)::INTEGER as first,
         max(year(date_mutation) * 12 + month(date_mutation) - 1)::INTEGER as last from ventes`,
    );
    const n = span.n;
    const firstMonth = span.first ?? 0;
    const months = span.last === null ? 1 : span.last - firstMonth + 1;

    const depOf = new Uint8Array(n);
    const cpOf = new Uint16Array(n);
    const communeOf = new Uint16Array(n);
    const day = new Uint16Array(n);
    const tf = new Uint8Array(n);
    const price = new Float64Array(n);
    const m2 = new Float64Array(n);
    const surface = new Float64Array(n);
    const filled = await copyColumns(conn, ROWS_SQL, {}, [depOf, cpOf, communeOf, day, tf, price, m2, surface]);
    if (filled !== n) throw new Error(`ventes changed while it was read (${filled} rows, ${n} expected)`);

    const depStart = offsetsOf(depOf, depCodes.length);
    const { start: cpStart, rows: cpRows } = groupRows(cpOf, cpCodes.length, NO_POSTAL_CODE);
    const { start: communeStart, rows: communeRows } = groupRows(communeOf, communeCodes.length);

    const nBlocks = depCodes.length * months * SALE_TYPES.length * FLAG_COMBINATIONS;
    const blocks = {} as Record<Measure, Blocks>;
    for (const measure of MEASURES) {
      const m = measure === 'price' ? n : countValid(measure === 'm2' ? m2 : surface, measure === 'surface');
      const values = new Float64Array(m);
      const blockOf = new Uint32Array(m);
      const got = await copyColumns(conn, fillSql(VALUES_SQL, MEASURE_SQL[measure]), { months, first_month: firstMonth }, [blockOf, values]);
      if (got !== m) throw new Error(`ventes changed while it was read (${got} ${measure} values, ${m} expected)`);
      const start = offsetsOf(blockOf, nBlocks);
      const sum = new Float64Array(nBlocks);
      for (let b = 0; b < nBlocks; b++) {
        let s = 0;
        for (let i = start[b]; i < start[b + 1]; i++) s += values[i];
        sum[b] = s;
      }
      blocks[measure] = { values, start, sum };
    }
    const index = (codes: string[]) => new Map(codes.map((c, i) => [c, i]));
    return new SalesIndex(day, tf, price, m2, surface, depOf, cpOf, communeOf, index(depCodes), depStart, index(cpCodes), cpStart, cpRows, index(communeCodes), communeStart, communeRows, firstMonth, months, blocks);
  }

  /** The statistics stats/market gives of a zone: count, then median, mean, min and max of each measure. */
  stats(q: ZoneQuery): ZoneStats {
    let typeMask = 0;
    for (const t of q.types) {
      const i = SALE_TYPES.indexOf(t as (typeof SALE_TYPES)[number]);
      if (i >= 0) typeMask |= 1 << i;
    }
    const excluded = (q.exclude_bulk_sales ? BULK : 0) | (q.exclude_outliers ? OUTLIER : 0) | (q.exclude_vefa ? VEFA : 0);
    const from = dayOf(q.date_debut);
    const to = dayOf(q.date_fin);
    const empty = emptyStats();
    if (!typeMask || from > to) return empty;

    let depSet: Set<number> | undefined;
    if (q.departements !== undefined) {
      depSet = new Set(q.departements.map((d) => this.deps.get(d)).filter((d): d is number => d !== undefined));
      if (!depSet.size) return empty;
    }
    if (q.code_postal === undefined && q.communes === undefined) {
      if (depSet?.size !== 1) throw new Error('a zone of the sales index needs a postal code, communes or one département');
      return this.departement([...depSet][0], typeMask, excluded, from, to);
    }

    // Candidate rows: the postal code's, else the communes'; the other codes given are checked row by row.
    const cp = q.code_postal === undefined ? undefined : this.cps.get(q.code_postal);
    if (q.code_postal !== undefined && cp === undefined) return empty;
    let communeSet: Set<number> | undefined;
    if (q.communes !== undefined) {
      communeSet = new Set(q.communes.map((c) => this.communes.get(c)).filter((c): c is number => c !== undefined));
      if (!communeSet.size) return empty;
    }
    const lists: Array<[number, number, Int32Array]> =
      cp !== undefined ? [[this.cpStart[cp], this.cpStart[cp + 1], this.cpRows]] : [...communeSet!].map((c) => [this.communeStart[c], this.communeStart[c + 1], this.communeRows]);
    const g = new Gather();
    for (const [lo, hi, rows] of lists) {
      const begin = lowerBoundBy(rows, lo, hi, (r) => this.day[r] >= from);
      for (let i = begin; i < hi; i++) {
        const r = rows[i];
        if (this.day[r] > to) break;
        const f = this.tf[r];
        if (!((typeMask >> (f & TYPE_BITS)) & 1) || (f >> 3) & excluded) continue;
        if (cp !== undefined && communeSet && !communeSet.has(this.communeOf[r])) continue;
        if (depSet && !depSet.has(this.depOf[r])) continue;
        g.add(this.price[r], this.m2[r], this.surface[r]);
      }
    }
    return g.stats();
  }

  /** A whole département: the blocks of the window's full months, and the rows of its partial ones, sorted. */
  private departement(dep: number, typeMask: number, excluded: number, from: number, to: number): ZoneStats {
    const lastMonth = this.firstMonth + this.months - 1;
    const fromMonth = monthOfDay(from);
    const toMonth = monthOfDay(to);
    // Full months: from the first month starting on or after `from` to the last ending on or before `to`.
    let fullFrom = firstDayOfMonth(fromMonth) === from ? fromMonth : fromMonth + 1;
    let fullTo = firstDayOfMonth(toMonth + 1) - 1 === to ? toMonth : toMonth - 1;
    fullFrom = Math.max(fullFrom, this.firstMonth);
    fullTo = Math.min(fullTo, lastMonth);

    // The partial months' rows: the days of the window outside the full months.
    const partial = new Gather();
    const depLo = this.depStart[dep];
    const depHi = this.depStart[dep + 1];
    const addDays = (d0: number, d1: number) => {
      for (let r = lowerBoundBy(null, depLo, depHi, (i) => this.day[i] >= d0); r < depHi && this.day[r] <= d1; r++) {
        const f = this.tf[r];
        if (!((typeMask >> (f & TYPE_BITS)) & 1) || (f >> 3) & excluded) continue;
        partial.add(this.price[r], this.m2[r], this.surface[r]);
      }
    };
    if (fullFrom > fullTo) addDays(from, to);
    else {
      if (from < firstDayOfMonth(fullFrom)) addDays(from, firstDayOfMonth(fullFrom) - 1);
      if (to > firstDayOfMonth(fullTo + 1) - 1) addDays(firstDayOfMonth(fullTo + 1), to);
    }

    const out = emptyStats();
    const extra = partial.sorted();
    for (const measure of MEASURES) {
      const { values, start, sum } = this.blocks[measure];
      const runs: Run[] = [];
      let n = 0;
      let total = 0;
      for (let m = fullFrom; m <= fullTo; m++) {
        for (let t = 0; t < SALE_TYPES.length; t++) {
          if (!((typeMask >> t) & 1)) continue;
          const base = ((dep * this.months + (m - this.firstMonth)) * SALE_TYPES.length + t) * FLAG_COMBINATIONS;
          for (let f = 0; f < FLAG_COMBINATIONS; f++) {
            if (f & excluded) continue;
            const lo = start[base + f];
            const hi = start[base + f + 1];
            if (hi > lo) {
              runs.push({ a: values, lo, hi });
              n += hi - lo;
              total += sum[base + f];
            }
          }
        }
      }
      const e = extra[measure];
      if (e.length) {
        runs.push({ a: e, lo: 0, hi: e.length });
        n += e.length;
        for (let i = 0; i < e.length; i++) total += e[i];
      }
      if (measure === 'price') out.count = n;
      if (!n) continue;
      let min = Infinity;
      let max = -Infinity;
      for (const r of runs) {
        if (r.a[r.lo] < min) min = r.a[r.lo];
        if (r.a[r.hi - 1] > max) max = r.a[r.hi - 1];
      }
      const k = n >> 1;
      const upper = kthOfRuns(runs, k);
      const median = n % 2 ? upper : interpolate(kthOfRuns(runs, k - 1), upper);
      out[measure === 'price' ? 'price' : measure === 'm2' ? 'price_per_m2' : 'surface'] = { median, avg: total / n, min, max };
    }
    return out;
  }
}

/** DuckDB's median of an even count: the lower middle value plus half the gap to the upper one. */
const interpolate = (lo: number, hi: number): number => lo + (hi - lo) * 0.5;

function emptyStats(): ZoneStats {
  const none = (): MeasureStats => ({ median: null, avg: null, min: null, max: null });
  return { count: 0, price: none(), price_per_m2: none(), surface: none() };
}

/** The values of the rows a scan keeps, per measure (€/m² and surface only where the SQL path counts them). */
class Gather {
  private n = 0;
  private readonly v: Record<Measure, { a: Float64Array; n: number }> = {
    price: { a: new Float64Array(1024), n: 0 },
    m2: { a: new Float64Array(1024), n: 0 },
    surface: { a: new Float64Array(1024), n: 0 },
  };

  add(price: number, m2: number, surface: number): void {
    this.n++;
    push(this.v.price, price);
    if (m2 === m2) push(this.v.m2, m2);
    if (surface > 0) push(this.v.surface, surface);
  }

  /** Each measure's values in ascending order. */
  sorted(): Record<Measure, Float64Array> {
    const s = (m: Measure) => this.v[m].a.subarray(0, this.v[m].n).sort();
    return { price: s('price'), m2: s('m2'), surface: s('surface') };
  }

  stats(): ZoneStats {
    const one = (m: Measure): MeasureStats => {
      const { a, n } = this.v[m];
      if (!n) return { median: null, avg: null, min: null, max: null };
      let sum = 0;
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < n; i++) {
        const x = a[i];
        sum += x;
        if (x < min) min = x;
        if (x > max) max = x;
      }
      const k = n >> 1;
      const upper = select(a, 0, n - 1, k);
      let median = upper;
      if (n % 2 === 0) {
        // After the selection every value before k is at most a[k]: the lower middle value is their maximum.
        let lower = -Infinity;
        for (let i = 0; i < k; i++) if (a[i] > lower) lower = a[i];
        median = interpolate(lower, upper);
      }
      return { median, avg: sum / n, min, max };
    };
    return { count: this.n, price: one('price'), price_per_m2: one('m2'), surface: one('surface') };
  }
}

function push(v: { a: Float64Array; n: number }, x: number): void {
  if (v.n === v.a.length) {
    const bigger = new Float64Array(v.a.length * 2);
    bigger.set(v.a);
    v.a = bigger;
  }
  v.a[v.n++] = x;
}

/** Rearranges a[lo..hi] so that a[k] is the value of rank k, smaller ones before it; returns it (Hoare's selection). */
function select(a: Float64Array, lo: number, hi: number, k: number): number {
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // median of three as the pivot
    if (a[mid] < a[lo]) swap(a, mid, lo);
    if (a[hi] < a[lo]) swap(a, hi, lo);
    if (a[hi] < a[mid]) swap(a, hi, mid);
    const pivot = a[mid];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        swap(a, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/**
 * The value of rank k among sorted runs, without merging them: each round takes the weighted median of the runs'
 * middle values as a pivot, counts the values below and up to it by binary search, and drops the side that cannot hold
 * rank k (at least a quarter of what is left); a small remainder is copied and selected.
 */
function kthOfRuns(input: Run[], k: number): number {
  let runs = input.map((r) => ({ ...r }));
  for (;;) {
    runs = runs.filter((r) => r.hi > r.lo);
    let left = 0;
    for (const r of runs) left += r.hi - r.lo;
    if (left <= 2048 || runs.length === 1) {
      if (runs.length === 1) return runs[0].a[runs[0].lo + k];
      const tmp = new Float64Array(left);
      let o = 0;
      for (const r of runs) {
        tmp.set(r.a.subarray(r.lo, r.hi), o);
        o += r.hi - r.lo;
      }
      return select(tmp, 0, left - 1, k);
    }
    const mids = runs.map((r) => ({ v: r.a[(r.lo + r.hi) >> 1], w: r.hi - r.lo })).sort((x, y) => x.v - y.v);
    let acc = 0;
    let pivot = mids[mids.length - 1].v;
    for (const m of mids) {
      acc += m.w;
      if (acc * 2 >= left) {
        pivot = m.v;
        break;
      }
    }
    let below = 0;
    let upTo = 0;
    const lt: number[] = [];
    const le: number[] = [];
    for (const r of runs) {
      const a = lowerBoundBy(null, r.lo, r.hi, (i) => r.a[i] >= pivot);
      const b = lowerBoundBy(null, a, r.hi, (i) => r.a[i] > pivot);
      lt.push(a);
      le.push(b);
      below += a - r.lo;
      upTo += b - r.lo;
    }
    if (k < below) runs.forEach((r, i) => (r.hi = lt[i]));
    else if (k < upTo) return pivot;
    else {
      k -= upTo;
      runs.forEach((r, i) => (r.lo = le[i]));
    }
  }
}

/** The first position in [lo, hi) where `ok` holds (of `rows[i]` when rows are given, else of i); `ok` is monotone. */
function lowerBoundBy(rows: Int32Array | null, lo: number, hi: number, ok: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ok(rows ? rows[mid] : mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function countValid(a: Float64Array, positive: boolean): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (positive ? a[i] > 0 : a[i] === a[i]) n++;
  return n;
}

/** Start offset of each group of a column sorted by group (length groups + 1). */
function offsetsOf(sortedGroup: ArrayLike<number>, groups: number): Int32Array {
  const start = new Int32Array(groups + 1);
  for (let i = 0; i < sortedGroup.length; i++) start[sortedGroup[i] + 1]++;
  for (let g = 0; g < groups; g++) start[g + 1] += start[g];
  return start;
}

/** The row numbers of each group, in row order (a stable counting sort); rows of group `skip` are left out. */
function groupRows(groupOf: Uint16Array, groups: number, skip = -1): { start: Int32Array; rows: Int32Array } {
  const start = new Int32Array(groups + 1);
  for (let i = 0; i < groupOf.length; i++) if (groupOf[i] !== skip) start[groupOf[i] + 1]++;
  for (let g = 0; g < groups; g++) start[g + 1] += start[g];
  const rows = new Int32Array(start[groups]);
  const next = start.slice(0, groups);
  for (let i = 0; i < groupOf.length; i++) if (groupOf[i] !== skip) rows[next[groupOf[i]]++] = i;
  return { start, rows };
}

type NumericArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

/**
 * Streams a query's result into typed arrays, one per column in order, by copying each chunk's vector data (no value is
 * converted one by one). The columns must hold no NULL and match the arrays' types. Returns the rows read.
 */
async function copyColumns(conn: DuckDBConnection, sql: string, params: Params, into: NumericArray[]): Promise<number> {
  const result = await conn.stream(sql, params as never);
  let offset = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const n = chunk.rowCount;
    if (offset + n > into[0].length) throw new Error('more rows than expected');
    into.forEach((dest, c) => dest.set(vectorItems(chunk.getColumnVector(c), dest), offset));
    offset += n;
  }
  return offset;
}

/** The vector's data as a typed array of the destination's kind (the API keeps it in a field it does not document). */
function vectorItems(v: DuckDBVector, like: NumericArray): NumericArray {
  const items = (v as unknown as { items?: unknown }).items;
  if (!(items instanceof like.constructor)) throw new Error(`unexpected column type ${v.type.toString()} for the in-memory sales index`);
  return items as NumericArray;
}
