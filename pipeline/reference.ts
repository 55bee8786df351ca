// Reference geography into the lake (`lake/reference/*.parquet`) from the pinned npm packages, so that the marts can
// map former commune codes to current ones and name zones. Rewritten (one lake commit) when the package vintage changes.
import fs from 'node:fs';
import path from 'node:path';
import { lit, openMemory, run } from '../lib/duck';
import { allCommunes, codeMappings, REFERENCE_VINTAGE } from '../lib/geo';
import type { Lake } from '../lib/lake';

export async function writeReference(lake: Lake): Promise<boolean> {
  const vintage = `decoupage-administratif@${REFERENCE_VINTAGE.decoupageAdministratif}, codes-postaux@${REFERENCE_VINTAGE.codesPostaux}`;
  const manifest = lake.readManifest();
  if (manifest.reference?.communes === vintage && fs.existsSync(path.join(lake.root, 'reference', 'communes.parquet'))) return false;

  const staging = lake.makeStagingDir();
  const { instance, conn } = await openMemory({ threads: 1 });
  const tx = lake.transaction();
  try {
    const communes = allCommunes().map((c) => ({
      code: c.code, nom: c.nom, nom_normalise: c.nomNormalise, departement: c.departement, type: c.type,
      parent: c.parent ?? null, codes_postaux: c.codesPostaux, population: c.population ?? null,
    }));
    const tables = { communes, commune_codes: codeMappings() };
    for (const [name, rows] of Object.entries(tables)) {
      const json = path.join(staging, `${name}.json`);
      fs.writeFileSync(json, JSON.stringify(rows));
      const out = path.join(staging, `${name}.parquet`);
      await run(conn, `copy (select * from read_json(${lit(json)}, format = 'array')) to ${lit(out)} (format parquet)`);
      tx.putFile(`reference/${name}.parquet`, out);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
    fs.rmSync(staging, { recursive: true, force: true });
  }
  tx.commit((m) => void (m.reference = { communes: vintage }));
  return true;
}
