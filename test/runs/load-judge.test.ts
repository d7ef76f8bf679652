import { expect, test } from "vitest";
import { createLoadJudge } from "../../src/runs/load-judge.js";

const states = (lags: number[], options = {}) => {
  const judge = createLoadJudge({ maxDelayMs: 100, ...options });
  return lags.map((lag) => judge.add(lag));
};

test("a start is not judged until the loop has been healthy 3 samples in a row, or the grace has passed", () => {
  expect(states([900, 900, 900, 900, 10, 10, 10])).toEqual([
    "warming",
    "warming",
    "warming",
    "warming",
    "warming",
    "warming",
    "normal",
  ]);
  // Lagging all along: armed after the grace, and then overloaded at once (the lag was sustained).
  expect(states([900, 900, 900, 900], { graceSamples: 4 })).toEqual(["warming", "warming", "warming", "overloaded"]);
});

test("overloaded only after 3 lagging samples in a row; one slow moment changes nothing", () => {
  const armed = [10, 10, 10];
  expect(states([...armed, 5_000, 10, 5_000, 10]).slice(3)).toEqual(["normal", "normal", "normal", "normal"]);
  expect(states([...armed, 200, 200, 200]).slice(3)).toEqual(["normal", "normal", "overloaded"]);
});

test("hysteresis: it stays overloaded until 3 samples in a row are below half the threshold", () => {
  const overloaded = [10, 10, 10, 200, 200, 200];
  // Between half the threshold and the threshold: neither healthy nor lagging.
  expect(states([...overloaded, 80, 80, 80, 80]).slice(6)).toEqual([
    "overloaded",
    "overloaded",
    "overloaded",
    "overloaded",
  ]);
  expect(states([...overloaded, 40, 40, 80, 40, 40, 40]).slice(6)).toEqual([
    "overloaded",
    "overloaded",
    "overloaded",
    "overloaded",
    "overloaded",
    "normal",
  ]);
});
