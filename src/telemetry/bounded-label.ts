/** The label value that stands for every value past the bound. */
export const OTHER_LABEL = "_other";

/**
 * Keeps a label's values few: the first `max` distinct values pass as they
 * are, later ones become `_other`. A model name comes from the request, so
 * without a bound every made-up name would be a new time series.
 */
export function boundedLabel(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return OTHER_LABEL;
    seen.add(value);
    return value;
  };
}
