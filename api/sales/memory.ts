// The zone statistics of `ventes` answered from memory: a columnar copy of the few columns they read (type, cleaning
// flags, date, zone ids, price, €/m², surface: 31 bytes a sale, about 0.6 GB for 20 M sales, plus the sorted blocks of a
// département's measures with their day of the month, 0.6 GB), loaded once per serving file. A postal code's or
// commune's sales are a list of row numbers sorted by date: the window is two binary searches, the rest a scan of its
// rows and a selection for the medians (a fraction of a millisecond for the busiest zones, against 4–5 ms of DuckDB
// reading whole row groups). A département's are blocks of one month, type and flag combination, each measure sorted
// within its block: a window is its whole months' blocks plus the in-window days of its cut months' blocks, and its
// medians a selection across these sorted runs (no copy of the hundreds of thousands of values). Every figure equals the SQL path's (marketStats in filter.ts), which stays the path for radius searches and
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
  /** The day of the month of each value's sale. */
  dom: Uint8Array;
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
const isoOfDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);
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
    const arrays = [this.day, this.tf, this.price, this.m2, this.surface, this.depOf, this.cpOf, this.communeOf, this.cpStart, this.cpRows, this.communeStart, this.communeRows];
    for (const b of Object.values(this.blocks)) arrays.push(b.values, b.dom, b.start, b.sum);
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

    const { start: cpStart, rows: cpRows } = groupRows(cpOf, cpCodes.length, NO_POSTAL_CODE);
    const { start: communeStart, rows: communeRows } = groupRows(communeOf, communeCodes.length);
    // Rows are sorted by département then date: the list of a zone whose sales span two départements is sorted again.
    for (const [start, rows] of [[cpStart, cpRows], [communeStart, communeRows]] as const) {
      for (let z = 0; z + 1 < start.length; z++) {
        const list = rows.subarray(start[z], start[z + 1]);
        for (let i = 1; i < list.length; i++) {
          if (day[list[i]] < day[list[i - 1]]) {
            list.sort((x, y) => day[x] - day[y]);
            break;
          }
        }
      }
    }

    const nBlocks = depCodes.length * months * SALE_TYPES.length * FLAG_COMBINATIONS;
    const blocks = {} as Record<Measure, Blocks>;
    for (const measure of MEASURES) {
      const m = measure === 'price' ? n : countValid(measure === 'm2' ? m2 : surface, measure === 'surface');
      const values = new Float64Array(m);
      const blockOf = new Uint32Array(m);
      const dom = new Uint8Array(m);
      const got = await copyColumns(conn, fillSql(VALUES_SQL, MEASURE_SQL[measure]), { months, first_month: firstMonth }, [blockOf, values, dom]);
      if (got !== m) throw new Error(`ventes changed while it was read (${got} ${measure} values, ${m} expected)`);
      const start = offsetsOf(blockOf, nBlocks);
      const sum = new Float64Array(nBlocks);
      for (let b = 0; b < nBlocks; b++) {
        let s = 0;
        for (let i = start[b]; i < start[b + 1]; i++) s += values[i];
        sum[b] = s;
      }
      blocks[measure] = { values, dom, start, sum };
    }
    const index = (codes: string[]) => new Map(codes.map((c, i) => [c, i]));
    return new SalesIndex(day, tf, price, m2, surface, depOf, cpOf, communeOf, index(depCodes), index(cpCodes), cpStart, cpRows, index(communeCodes), communeStart, communeRows, firstMonth, months, blocks);
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

    let deps: number[] | undefined;
    if (q.departements !== undefined) {
      deps = q.departements.map((d) => this.deps.get(d)).filter((d): d is number => d !== undefined);
      if (!deps.length) return empty;
    }
    if (q.code_postal === undefined && q.communes === undefined) {
      if (deps?.length !== 1) throw new Error('a zone of the sales index needs a postal code, communes or one département');
      return this.departement(deps[0], typeMask, excluded, from, to);
    }
    const depAllowed = deps && new Uint8Array(256);
    for (const d of deps ?? []) depAllowed![d] = 1;

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
    const begins = lists.map(([lo, hi, rows]) => lowerBoundBy(rows, lo, hi, (r) => this.day[r] >= from));
    const g = new Gather(lists.reduce((n, [, hi], i) => n + hi - begins[i], 0));
    const { day, tf, price, m2, surface, depOf, communeOf } = this;
    lists.forEach(([, hi, rows], l) => {
      for (let i = begins[l]; i < hi; i++) {
        const r = rows[i];
        if (day[r] > to) break;
        const f = tf[r];
        if (!((typeMask >> (f & TYPE_BITS)) & 1) || (f >> 3) & excluded) continue;
        if (cp !== undefined && communeSet && !communeSet.has(communeOf[r])) continue;
        if (depAllowed && !depAllowed[depOf[r]]) continue;
        g.add(price[r], m2[r], surface[r]);
      }
    });
    return g.stats();
  }

  /**
   * The statistics of each calendar period (months, quarters or years) of the window that has sales, in order, each
   * over the days of the period inside the window: what a `group by date_trunc(unit, date_mutation)` gives.
   */
  byPeriod(q: ZoneQuery, months: 1 | 3 | 12): Array<{ start: string; stats: ZoneStats }> {
    const out: Array<{ start: string; stats: ZoneStats }> = [];
    const from = dayOf(q.date_debut);
    const to = dayOf(q.date_fin);
    if (from > to) return out;
    const first = monthOfDay(from) - (monthOfDay(from) % months);
    for (let m = first; firstDayOfMonth(m) <= to; m += months) {
      const start = firstDayOfMonth(m);
      const end = firstDayOfMonth(m + months) - 1;
      // Periods outside the loaded months have no sale: skipped without a look.
      if (m + months <= this.firstMonth || m >= this.firstMonth + this.months) continue;
      const stats = this.stats({ ...q, date_debut: isoOfDay(Math.max(start, from)), date_fin: isoOfDay(Math.min(end, to)) });
      if (stats.count) out.push({ start: isoOfDay(start), stats });
    }
    return out;
  }

  /**
   * A whole département: the window cut into calendar months; a whole month reads its blocks, a cut one the values of
   * its blocks whose day of the month lies in the window (a filter of a sorted block stays sorted); the medians are a
   * selection across all these sorted runs.
   */
  private departement(dep: number, typeMask: number, excluded: number, from: number, to: number): ZoneStats {
    const pieces: Array<{ m: number; d0: number; d1: number; whole: boolean }> = [];
    for (let m = Math.max(monthOfDay(from), this.firstMonth); m <= Math.min(monthOfDay(to), this.firstMonth + this.months - 1); m++) {
      const first = firstDayOfMonth(m);
      const last = firstDayOfMonth(m + 1) - 1;
      const d0 = Math.max(first, from);
      const d1 = Math.min(last, to);
      pieces.push({ m, d0: d0 - first + 1, d1: d1 - first + 1, whole: d0 === first && d1 === last });
    }
    const out = emptyStats();
    for (const measure of MEASURES) {
      const { values, dom, start, sum } = this.blocks[measure];
      const runs: Run[] = [];
      const cut: Array<[number, number, number, number]> = [];
      let n = 0;
      let total = 0;
      for (const { m, d0, d1, whole } of pieces) {
        for (let t = 0; t < SALE_TYPES.length; t++) {
          if (!((typeMask >> t) & 1)) continue;
          const base = ((dep * this.months + (m - this.firstMonth)) * SALE_TYPES.length + t) * FLAG_COMBINATIONS;
          for (let f = 0; f < FLAG_COMBINATIONS; f++) {
            if (f & excluded) continue;
            const lo = start[base + f];
            const hi = start[base + f + 1];
            if (hi <= lo) continue;
            if (whole) {
              runs.push({ a: values, lo, hi });
              n += hi - lo;
              total += sum[base + f];
            } else cut.push([lo, hi, d0, d1]);
          }
        }
      }
      if (cut.length) {
        const buf = partialRuns(cut.reduce((c, [lo, hi]) => c + hi - lo, 0));
        let o = 0;
        for (const [lo, hi, d0, d1] of cut) {
          const o0 = o;
          for (let i = lo; i < hi; i++) {
            if (dom[i] < d0 || dom[i] > d1) continue;
            buf[o++] = values[i];
            total += values[i];
          }
          if (o > o0) runs.push({ a: buf, lo: o0, hi: o });
        }
        n += o;
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

/** DuckDB's median of an even count: its linear interpolation `lo × (1 − d) + hi × d` at d = 0.5, bit for bit. */
const interpolate = (lo: number, hi: number): number => lo * 0.5 + hi * 0.5;

function emptyStats(): ZoneStats {
  const none = (): MeasureStats => ({ median: null, avg: null, min: null, max: null });
  return { count: 0, price: none(), price_per_m2: none(), surface: none() };
}

/**
 * Scratch space of the scans, shared (a statistic is computed synchronously, one at a time): growing it once instead of
 * allocating a zeroed array per query keeps the collector out of the request path.
 */
const scratch: Record<Measure, Float64Array> = { price: new Float64Array(1 << 16), m2: new Float64Array(1 << 16), surface: new Float64Array(1 << 16) };

/** The values of the rows a scan keeps, per measure (€/m² and surface only where the SQL path counts them). */
class Gather {
  private n = 0;
  private nm2 = 0;
  private nsurface = 0;
  private readonly price: Float64Array;
  private readonly m2: Float64Array;
  private readonly surface: Float64Array;

  /** For at most `capacity` rows; the previous Gather's values are overwritten. */
  constructor(capacity: number) {
    if (scratch.price.length < capacity) {
      let size = scratch.price.length;
      while (size < capacity) size *= 2;
      for (const m of MEASURES) scratch[m] = new Float64Array(size);
    }
    ({ price: this.price, m2: this.m2, surface: this.surface } = scratch);
  }

  add(price: number, m2: number, surface: number): void {
    this.price[this.n++] = price;
    if (m2 === m2) this.m2[this.nm2++] = m2;
    if (surface > 0) this.surface[this.nsurface++] = surface;
  }

  private values(m: Measure): Float64Array {
    return m === 'price' ? this.price.subarray(0, this.n) : m === 'm2' ? this.m2.subarray(0, this.nm2) : this.surface.subarray(0, this.nsurface);
  }

  /** Each measure's values in ascending order. */
  sorted(): Record<Measure, Float64Array> {
    return { price: this.values('price').sort(), m2: this.values('m2').sort(), surface: this.values('surface').sort() };
  }

  stats(): ZoneStats {
    const one = (m: Measure): MeasureStats => {
      const a = this.values(m);
      const n = a.length;
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

let partialScratch = new Float64Array(1 << 16);

/** Scratch space for the cut months' runs of a département (shared, as `scratch`). */
function partialRuns(capacity: number): Float64Array {
  if (partialScratch.length < capacity) {
    let size = partialScratch.length;
    while (size < capacity) size *= 2;
    partialScratch = new Float64Array(size);
  }
  return partialScratch;
}

/**
 * The value of rank k among sorted runs, without merging them: each round takes the weighted median of the runs'
 * middle values as a pivot, counts the values below and up to it by binary search, and drops the side that cannot hold
 * rank k (at least a quarter of what is left); a small remainder is copied and selected.
 */
function kthOfRuns(runs: Run[], k: number): number {
  const n = runs.length;
  const lo = Int32Array.from(runs, (r) => r.lo);
  const hi = Int32Array.from(runs, (r) => r.hi);
  const lt = new Int32Array(n);
  const le = new Int32Array(n);
  const mids: Array<{ v: number; w: number }> = [];
  for (;;) {
    let left = 0;
    let open = -1;
    let opened = 0;
    for (let i = 0; i < n; i++) {
      if (hi[i] > lo[i]) {
        left += hi[i] - lo[i];
        open = i;
        opened++;
      }
    }
    if (opened === 1) return runs[open].a[lo[open] + k];
    if (left <= 2048) {
      const tmp = new Float64Array(left);
      let o = 0;
      for (let i = 0; i < n; i++) {
        if (hi[i] <= lo[i]) continue;
        tmp.set(runs[i].a.subarray(lo[i], hi[i]), o);
        o += hi[i] - lo[i];
      }
      return select(tmp, 0, left - 1, k);
    }
    mids.length = 0;
    for (let i = 0; i < n; i++) if (hi[i] > lo[i]) mids.push({ v: runs[i].a[(lo[i] + hi[i]) >> 1], w: hi[i] - lo[i] });
    mids.sort((x, y) => x.v - y.v);
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
    for (let i = 0; i < n; i++) {
      const a = runs[i].a;
      // The first value ≥ pivot, then the first > pivot, by binary search (inlined: this loop is the hot one).
      let x = lo[i];
      let y = hi[i];
      while (x < y) {
        const mid = (x + y) >>> 1;
        if (a[mid] >= pivot) y = mid;
        else x = mid + 1;
      }
      lt[i] = x;
      y = hi[i];
      while (x < y) {
        const mid = (x + y) >>> 1;
        if (a[mid] > pivot) y = mid;
        else x = mid + 1;
      }
      le[i] = x;
      below += lt[i] - lo[i];
      upTo += le[i] - lo[i];
    }
    if (k < below) hi.set(lt);
    else if (k < upTo) return pivot;
    else {
      k -= upTo;
      lo.set(le);
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
