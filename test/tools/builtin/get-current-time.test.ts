import { describe, expect, it } from "vitest";
import { createGetCurrentTimeTool } from "../../../src/tools/builtin/get-current-time.js";
import { runTool } from "../run-tool.js";

const at = (iso: string) => createGetCurrentTimeTool({ now: () => new Date(iso) });

describe("get_current_time", () => {
  it("gives the local time, offset and weekday in the zone", async () => {
    await expect(runTool(at("2024-03-10T12:34:56.789Z"), { timezone: "Asia/Tokyo" })).resolves.toEqual({
      timezone: "Asia/Tokyo",
      iso: "2024-03-10T21:34:56+09:00",
      local: "2024-03-10 21:34:56",
      utc_offset: "+09:00",
      weekday: "Sunday",
    });
  });

  it("handles half-hour offsets, daylight saving and crossing the date line", async () => {
    const tool = at("2024-07-01T23:30:00Z");
    await expect(runTool(tool, { timezone: "Asia/Kolkata" })).resolves.toMatchObject({
      iso: "2024-07-02T05:00:00+05:30",
      weekday: "Tuesday",
    });
    await expect(runTool(tool, { timezone: "America/New_York" })).resolves.toMatchObject({
      iso: "2024-07-01T19:30:00-04:00", // EDT in July
      utc_offset: "-04:00",
    });
    await expect(runTool(at("2024-01-15T12:00:00Z"), { timezone: "America/New_York" })).resolves.toMatchObject({
      utc_offset: "-05:00", // EST in January
    });
    await expect(runTool(tool, { timezone: "Pacific/Kiritimati" })).resolves.toMatchObject({
      iso: "2024-07-02T13:30:00+14:00",
    });
  });

  it("defaults to UTC and accepts any capitalization of a zone", async () => {
    const tool = at("2024-03-10T00:00:00Z");
    await expect(runTool(tool, {})).resolves.toMatchObject({ timezone: "UTC", utc_offset: "+00:00" });
    await expect(runTool(tool, { timezone: "europe/paris" })).resolves.toMatchObject({
      timezone: "Europe/Paris",
      utc_offset: "+01:00",
    });
  });

  it("rejects an unknown zone with an example of a valid one", async () => {
    await expect(runTool(at("2024-03-10T00:00:00Z"), { timezone: "Mars/Olympus" })).rejects.toThrow(
      /unknown time zone "Mars\/Olympus".*"Europe\/Paris"/,
    );
  });
});
