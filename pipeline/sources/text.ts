// Pure helpers for the small national CSV files (INSEE Filosofi, ANIL rent map): bytes to text whatever the
// compression and encoding, `;`-separated lines with optional quotes, French numbers and commune codes.
import zlib from 'node:zlib';

/** UTF-8 text of a file's bytes: gunzipped when gzip, BOM removed, Windows-1252 when the bytes are not valid UTF-8. */
export function decodeText(bytes: Buffer): { text: string; encoding: 'utf-8' | 'windows-1252' } {
  const raw = bytes[0] === 0x1f && bytes[1] === 0x8b ? zlib.gunzipSync(bytes) : bytes;
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(raw).replace(/^\uFEFF/, ''), encoding: 'utf-8' };
  } catch {
    // Older ANIL and INSEE files are published in Windows-1252 (accents of LIBGEO).
    return { text: new TextDecoder('windows-1252').decode(raw), encoding: 'windows-1252' };
  }
}

/** Splits one delimited line; fields may be quoted ("a;b", "" for a quote). */
export function splitLine(line: string, sep = ';'): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') (cur += '"'), i++;
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === sep) out.push(cur), (cur = '');
    else cur += ch;
  }
  out.push(cur);
  return out.map((s) => s.trim());
}

/** Header and data rows (as objects keyed by the header's names) of a delimited text; blank lines are skipped. */
export function readTable(text: string, sep = ';'): { header: string[]; rows: Array<Record<string, string>> } {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (!lines.length) throw new Error('empty file');
  const header = splitLine(lines[0], sep);
  const rows = lines.slice(1).map((l) => {
    const cells = splitLine(l, sep);
    return Object.fromEntries(header.map((h, i) => [h, cells[i] ?? '']));
  });
  return { header, rows };
}

/** A French number ("19,67", "24820", "1 032 431", "-18,5"); undefined when the text is not a number. */
export function parseFrenchNumber(s: string): number | undefined {
  const t = s.replace(/[\s\u00a0\u202f]/g, '').replace(',', '.');
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) ? Number(t) : undefined;
}

/** INSEE commune code on 5 characters ('1001' from a spreadsheet → '01001'; '2A004' kept), or undefined. */
export function communeCode(s: string): string | undefined {
  const t = s.trim().toUpperCase();
  const code = /^\d{4}$/.test(t) ? `0${t}` : t;
  return /^(\d{5}|2[AB]\d{3})$/.test(code) ? code : undefined;
}
