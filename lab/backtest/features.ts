// `npm run lab -- backtest-features [--max-targets N]`: the walk-forward backtest of DATA_DIR run twice, without
// and with the building and energy adjustments (lib/valuation/features.ts), compared on the same targets: all, and
// those whose own sale has a matched diagnostic class and/or a matched building year (docs/valuation.md, "Building and energy adjustments").
// Ends with the adjusted run, so the published calibration is the adjusted estimator's.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dataDir, paths } from '../../lib/config';
import { all, lit, openMemory } from '../../lib/duck';
import { currentServingFile } from '../../lib/serving';
import { metrics, pct, runBacktest, type Metrics } from '../../lib/valuation/backtest';
import { count } from '../args';

interface Mid {
  target_id: number;
  type_local: string;
  actual: number;
  mid: number | null;
  screened_out: boolean;
}

async function main(): Promise<void> {
  const dataRoot = dataDir();
  const { values } = parseArgs({ options: { 'max-targets': { type: 'string' } } });
  const maxTargets = count(values['max-targets'], 'max-targets', 20_000);
  const { instance, conn } = await openMemory({ threads: 2 });
  try {
    const parquet = lit(path.join(paths.marts(dataRoot), 'valuation_backtest.parquet'));
    const read = () => all<Mid>(conn, `select target_id, type_local, actual, mid, screened_out from read_parquet(${parquet})`);
    const t0 = process.cpuUsage();
    await runBacktest({ dataRoot, maxTargets, features: false });
    const off = new Map((await read()).map((r) => [r.target_id, r]));
    await runBacktest({ dataRoot, maxTargets, features: true });
    const on = await read();
    const cpu = process.cpuUsage(t0);
    await conn.run(`attach ${lit(currentServingFile(dataRoot)!)} as s (read_only)`);
    const feats = new Map(
      (
        await all<{ id: number; cls: boolean; year: boolean }>(
          conn,
          `select v.id, d.classe_energie is not null as cls, b.annee_construction is not null as year
           from s.ventes v left join s.dpe_ventes d using (id) left join s.bdnb_ventes b using (id)
           where v.id in (select target_id from read_parquet(${parquet}))`,
        )
      ).map((r) => [r.id, r]),
    );
    const kept = on.filter((r) => !r.screened_out && r.mid !== null && off.get(r.target_id)?.mid != null);
    const groups: Array<[string, (r: Mid) => boolean]> = [
      ['all targets', () => true],
      ['with a class (matched diagnostic)', (r) => !!feats.get(r.target_id)?.cls],
      ['with a year (matched building)', (r) => !!feats.get(r.target_id)?.year],
      ['with both', (r) => !!feats.get(r.target_id)?.cls && !!feats.get(r.target_id)?.year],
      ['with neither', (r) => !feats.get(r.target_id)?.cls && !feats.get(r.target_id)?.year],
    ];
    const line = (m: Metrics) => `${pct(m.mdape)} | ${pct(m.within_10)} | ${pct(m.bias)}`;
    console.log('| targets (valued by both runs) | n | MdAPE without | ±10 % without | bias without | MdAPE with | ±10 % with | bias with |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const type of ['Appartement', 'Maison', null]) {
      for (const [name, keep] of groups) {
        const rows = kept.filter((r) => (type === null || r.type_local === type) && keep(r));
        if (!rows.length) continue;
        const before = metrics(rows.map((r) => ({ actual: r.actual, predicted: off.get(r.target_id)!.mid })));
        const after = metrics(rows.map((r) => ({ actual: r.actual, predicted: r.mid })));
        console.log(`| ${type ?? 'both types'}: ${name} | ${rows.length} | ${line(before)} | ${line(after)} |`);
      }
    }
    console.log(`\n(two backtest runs: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} CPU-s of the Node process, DuckDB threads included)`);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

main().catch((e: Error) => {
  console.error(e.stack ?? e.message);
  process.exit(1);
});
