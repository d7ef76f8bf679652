import { readFileSync } from "node:fs";
import semver from "semver";
import { describe, expect, test } from "vitest";

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
const pkg = JSON.parse(read("package.json")) as { engines: { node: string } };
const lock = JSON.parse(read("package-lock.json")) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

/**
 * One truth about the Node.js loopd runs on: package.json's `engines.node`.
 * Every package `npm ci` installs must accept every version it names (else
 * npm prints EBADENGINE, and `.npmrc`'s engine-strict turns that into an
 * error), and the README names the same range. When an upgrade needs a
 * newer Node, either pin the package back (package.json `overrides`: cookie
 * and content-disposition 2+ want Node 22) or change `engines` and the README
 * together.
 */
describe("the Node.js versions loopd supports", () => {
  const ours = pkg.engines.node;

  test("every installed package accepts every version engines.node names", () => {
    const refusing = Object.entries(lock.packages).flatMap(([where, entry]) => {
      const theirs = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return theirs && !semver.subset(ours, theirs)
        ? [`${where.replace(/^.*node_modules\//, "")}@${entry.version} wants ${theirs}`]
        : [];
    });
    expect(refusing).toEqual([]);
  });

  test("the range is one that a real Node.js satisfies, this one included", () => {
    expect(semver.validRange(ours)).not.toBeNull();
    expect(semver.satisfies(process.versions.node, ours)).toBe(true);
  });

  test("the README names the same range, and npm refuses to install on any other", () => {
    expect(read("README.md")).toContain(`Node.js \`${ours}\``);
    expect(read(".npmrc")).toMatch(/^engine-strict=true$/m);
  });
});
