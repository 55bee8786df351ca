// One line of a delimited text file with double-quoted fields ("" inside quotes is a quote), for the few places that
// read a header or a sample line in Node (files themselves are parsed by DuckDB).

/** Fields of one delimited line, untrimmed. */
export function splitDelimited(line: string, sep: string): string[] {
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
  return out;
}
