/** A markdown table with right-aligned numeric columns. */
export function markdownTable(header: string[], rows: string[][]): string {
  const numeric = header.map((_, c) => rows.every((r) => /^[-+]?[\d.,]+(?:\s?[×x%]|\s?ms)?$|^–$/.test(r[c] ?? "")));
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const pad = (cell: string, c: number) => (numeric[c] ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!));
  const line = (cells: string[]) => `| ${cells.map(pad).join(" | ")} |`;
  const rule = `|${widths.map((w, c) => (numeric[c] ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}
