/** The host (and port) of a server's URL, without credentials or path; `fallback` when there is no URL or it does not parse. */
export function hostOf(url: string | undefined, fallback: string): string {
  if (!url) return fallback;
  try {
    return new URL(url).host || fallback;
  } catch {
    return fallback;
  }
}
