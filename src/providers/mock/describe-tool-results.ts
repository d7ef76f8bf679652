import type { ToolCallBlock, ToolResultBlock } from "../../core/messages.js";
import { isPlainObject } from "../shared/parse-tool-arguments.js";
import { toolImagesInWords } from "../shared/attachment-data.js";

/**
 * The mock provider's answer after its tool calls came back: one sentence per
 * result ("It is 14:05 on Monday in Asia/Tokyo.", "(3+4)^2 = 49"), or the
 * error the tool reported. It reads the built-in tools' results without
 * depending on their exact shape: JSON or plain text, ISO timestamps or
 * ready-made fields.
 */
export function describeToolResults(results: readonly ToolResultBlock[], calls: readonly ToolCallBlock[]): string {
  return results
    .map((result) => {
      const call = calls.find((c) => c.id === result.tool_call_id);
      if (result.is_error) {
        // Said as one sentence: the error's own closing full stop is dropped (not a regex: linear on any text).
        let reason = result.content.replace(/^\s*error:\s*/i, "").trim();
        if (reason.endsWith(".")) reason = reason.slice(0, -1);
        return `The ${result.name} tool reported an error: ${reason || "no details"}.`;
      }
      switch (result.name) {
        case "get_current_time":
          return describeTime(result.content, stringInput(call, "timezone"));
        case "calculate":
          return describeCalculation(result.content, stringInput(call, "expression"));
        default:
          return `The ${result.name} tool returned: ${result.content}${toolImagesInWords(result)}`;
      }
    })
    .join(" ");
}

function stringInput(call: ToolCallBlock | undefined, key: string): string | null {
  const value = call?.input[key];
  return typeof value === "string" ? value : null;
}

const ISO = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/;
const WEEKDAY = /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i;

function describeTime(content: string, requestedZone: string | null): string {
  const parsed = parseJson(content);
  const fields = isPlainObject(parsed) ? parsed : {};
  const zone = pickString(fields, ["timezone", "time_zone", "tz", "zone"]) ?? requestedZone ?? "UTC";
  const strings = [content, ...Object.values(fields).filter((v): v is string => typeof v === "string")];

  const iso = strings.map((s) => ISO.exec(s)).find((m) => m !== null);
  if (iso) {
    const local = iso[1] ? formatInZone(new Date(iso[0].replace(" ", "T")), zone) : null;
    if (local) return `It is ${local.time} on ${local.weekday} in ${zone}.`;
    // No offset: the timestamp is already the local wall-clock time.
    const [datePart = "", timePart = ""] = iso[0].split(/[T ]/);
    const weekday = new Date(`${datePart}T00:00:00Z`).toLocaleDateString("en-US", { weekday: "long", timeZone: "UTC" });
    return `It is ${timePart.slice(0, 5)} on ${weekday} in ${zone}.`;
  }
  const clock = strings.map((s) => /\b(\d{1,2}:\d{2})\b/.exec(s)).find((m) => m !== null);
  const weekday = strings.map((s) => WEEKDAY.exec(s)).find((m) => m !== null);
  if (clock) {
    const day = weekday ? ` on ${capitalize(weekday[1]!)}` : "";
    return `It is ${clock[1]}${day} in ${zone}.`;
  }
  return `The get_current_time tool returned: ${content}`;
}

function formatInZone(date: Date, zone: string): { time: string; weekday: string } | null {
  if (Number.isNaN(date.getTime())) return null;
  try {
    const time = date.toLocaleTimeString("en-GB", {
      timeZone: zone,
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    const weekday = date.toLocaleDateString("en-US", { timeZone: zone, weekday: "long" });
    return { time, weekday };
  } catch {
    return null; // not a zone Intl knows
  }
}

function describeCalculation(content: string, expression: string | null): string {
  const parsed = parseJson(content);
  let value: string = content.trim();
  if (typeof parsed === "number" || typeof parsed === "string") value = String(parsed);
  else if (isPlainObject(parsed)) {
    const result = parsed["result"] ?? parsed["value"] ?? parsed["answer"];
    if (typeof result === "number" || typeof result === "string") value = String(result);
  }
  if (expression === null) return `The result is ${value}.`;
  // A result that already reads "expr = value" is not repeated.
  if (value.includes("=")) return value;
  return `${expression} = ${value}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function pickString(fields: Record<string, unknown>, keys: string[]): string | null {
  for (const key of keys) {
    const value = fields[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return null;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
}
