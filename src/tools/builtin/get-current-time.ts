import { z } from "zod";
import { defineTool } from "../define-tool.js";

export function createGetCurrentTimeTool({
  now = () => new Date(),
}: {
  /** @default () => new Date() */
  now?: () => Date;
} = {}) {
  return defineTool({
    name: "get_current_time",
    description:
      "Get the current date and time in a time zone. Returns {timezone, iso, local, utc_offset, weekday}; " +
      "iso is the local time with its UTC offset.",
    input: z.object({
      timezone: z
        .string()
        .min(1)
        .max(100)
        .default("UTC")
        .describe('An IANA time zone name such as "Europe/Paris", "Asia/Tokyo" or "UTC"'),
    }),
    readOnly: true,
    execute: ({ timezone }) => currentTimeIn(timezone, now()),
  });
}

function currentTimeIn(timezone: string, date: Date) {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      weekday: "long",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
  } catch {
    throw new Error(
      `unknown time zone ${JSON.stringify(timezone)}; use an IANA name such as "Europe/Paris", "America/New_York" or "UTC"`,
    );
  }
  const parts = Object.fromEntries(format.formatToParts(date).map((p) => [p.type, p.value]));
  const { year, month, day, hour, minute, second, weekday } = parts as Record<string, string>;
  const local = `${year}-${month}-${day} ${hour}:${minute}:${second}`;
  // The offset is the zone's wall clock read as UTC minus the real instant.
  const wallClockAsUtc = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
  );
  const offset = formatOffset(Math.round((wallClockAsUtc - Math.floor(date.getTime() / 1000) * 1000) / 60_000));
  // ICU canonicalizes to its own spelling ("asia/tokyo" → "Asia/Tokyo"), but
  // also to legacy names ("Asia/Kolkata" → "Asia/Calcutta"); keep the caller's
  // name unless only its case differs.
  const resolved = format.resolvedOptions().timeZone;
  return {
    timezone: resolved.toLowerCase() === timezone.toLowerCase() ? resolved : timezone,
    iso: `${year}-${month}-${day}T${hour}:${minute}:${second}${offset}`,
    local,
    utc_offset: offset,
    weekday,
  };
}

/** 540 → "+09:00", -330 → "-05:30". */
function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}
