/** Where a field is in a JSON value, as people write it: `http[0].headers.Authorization`, `expect.final_text.regex`. */
export const fieldPath = (path: readonly PropertyKey[]) =>
  path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i === 0 ? "" : "."}${String(p)}`)).join("");
