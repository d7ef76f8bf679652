/**
 * The mock provider's reading of "what time is it in <place>": a small table
 * of common cities and countries → IANA zones. Anything else falls back to a
 * zone written out in the question (`Europe/Paris`) or to UTC.
 */
const ZONES: ReadonlyArray<readonly [string[], string]> = [
  [["tokyo", "japan", "osaka"], "Asia/Tokyo"],
  [["new york", "nyc", "boston", "washington", "miami"], "America/New_York"],
  [["chicago"], "America/Chicago"],
  [["denver"], "America/Denver"],
  [["los angeles", "san francisco", "seattle", "california"], "America/Los_Angeles"],
  [["toronto", "montreal"], "America/Toronto"],
  [["vancouver"], "America/Vancouver"],
  [["mexico city", "mexico"], "America/Mexico_City"],
  [["sao paulo", "rio de janeiro", "brazil"], "America/Sao_Paulo"],
  [["buenos aires", "argentina"], "America/Argentina/Buenos_Aires"],
  [["london", "england", "uk", "united kingdom", "britain"], "Europe/London"],
  [["dublin", "ireland"], "Europe/Dublin"],
  [["lisbon", "portugal"], "Europe/Lisbon"],
  [["paris", "france"], "Europe/Paris"],
  [["berlin", "germany", "munich"], "Europe/Berlin"],
  [["madrid", "spain", "barcelona"], "Europe/Madrid"],
  [["rome", "italy", "milan"], "Europe/Rome"],
  [["amsterdam", "netherlands"], "Europe/Amsterdam"],
  [["zurich", "switzerland"], "Europe/Zurich"],
  [["stockholm", "sweden"], "Europe/Stockholm"],
  [["athens", "greece"], "Europe/Athens"],
  [["istanbul", "turkey"], "Europe/Istanbul"],
  [["moscow", "russia"], "Europe/Moscow"],
  [["cairo", "egypt"], "Africa/Cairo"],
  [["lagos", "nigeria"], "Africa/Lagos"],
  [["nairobi", "kenya"], "Africa/Nairobi"],
  [["johannesburg", "cape town", "south africa"], "Africa/Johannesburg"],
  [["dubai", "abu dhabi", "uae"], "Asia/Dubai"],
  [["mumbai", "delhi", "new delhi", "bangalore", "india"], "Asia/Kolkata"],
  [["bangkok", "thailand"], "Asia/Bangkok"],
  [["jakarta", "indonesia"], "Asia/Jakarta"],
  [["singapore"], "Asia/Singapore"],
  [["hong kong"], "Asia/Hong_Kong"],
  [["beijing", "shanghai", "china"], "Asia/Shanghai"],
  [["seoul", "korea", "south korea"], "Asia/Seoul"],
  [["sydney", "australia"], "Australia/Sydney"],
  [["melbourne"], "Australia/Melbourne"],
  [["auckland", "new zealand"], "Pacific/Auckland"],
  [["utc", "gmt"], "UTC"],
];

// Longest names first, so "new delhi" wins over "delhi" and "mexico city" over "mexico".
const NAMES = ZONES.flatMap(([names, zone]) => names.map((name) => [name, zone] as const)).sort(
  ([a], [b]) => b.length - a.length,
);

const TIME_QUESTION =
  /\b(what(?:'s| is)? (?:the )?time|time (?:is it )?(?:in|at)|current time|local time|time now|time right now)\b/i;

export function isTimeQuestion(text: string): boolean {
  return TIME_QUESTION.test(text);
}

export function findTimezone(text: string): string {
  const normalized = text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();
  for (const [name, zone] of NAMES) {
    if (new RegExp(`\\b${name}\\b`).test(normalized)) return zone;
  }
  for (const candidate of text.match(/\b[A-Za-z]+\/[A-Za-z_]+(?:\/[A-Za-z_]+)?\b/g) ?? []) {
    if (isValidTimezone(candidate)) return candidate;
  }
  return "UTC";
}

export function isValidTimezone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
