// SQL expressions for the messy values of French files, applied by DuckDB to staged text columns (see pipeline/stage.ts):
// French numbers and commune codes. Each takes a SQL expression of type VARCHAR and returns one.

/** A French number ("19,67", "24820", "1 032 431", "-18,5") as DOUBLE; NULL when the text is not a finite number. */
export function frenchNumberSql(expr: string): string {
  const n = `TRY_CAST(replace(regexp_replace(${expr}, '[\\s\\x{00A0}\\x{202F}]', '', 'g'), ',', '.') AS DOUBLE)`;
  // TRY_CAST accepts 'nan' and 'inf', which are no numbers here.
  return `(CASE WHEN isfinite(${n}) THEN ${n} END)`;
}

/** INSEE commune code on 5 characters ('1001' from a spreadsheet → '01001'; '2a004' → '2A004'), or NULL. */
export function communeCodeSql(expr: string): string {
  const t = `upper(trim(${expr}))`;
  const code = `(CASE WHEN regexp_full_match(${t}, '\\d{4}') THEN '0' || ${t} ELSE ${t} END)`;
  return `(CASE WHEN regexp_full_match(${code}, '\\d{5}|2[AB]\\d{3}') THEN ${code} END)`;
}
