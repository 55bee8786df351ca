// The pipeline's source registry: `npm run pipeline -- <name>` runs SOURCES[name]. A plug-in source is added with
// `registerSource`, which also declares it to lib/sources (so the marts and `/v1/meta/sources` know its shape).
import { declareSource } from '../../lib/sources';
import { anilSource } from './anil';
import { dpeSource } from './dpe';
import { dvfSource } from './dvf';
import { filosofiSource } from './filosofi';
import type { Source } from './types';

export const SOURCES: Record<string, Source> = { dvf: dvfSource, dpe: dpeSource, filosofi: filosofiSource, anil: anilSource };

export function registerSource(source: Source): void {
  declareSource(source);
  SOURCES[source.name] = source;
}
