/**
 * The test hosts (scripts/hosts.mjs): HOST_VERSIONS is the one list; package.json installs exactly
 * those hosts, and the subset of tests the middle 1.x hosts run names files that exist.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  compareVersions,
  HOST_VERSIONS,
  hostDependency,
  hosts,
  REPO_ROOT,
  SUBSET_TESTS,
  testInclude,
} from "../../scripts/hosts.mjs";

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));

describe("test hosts", () => {
  it("are listed oldest first, each installed by its own devDependency", () => {
    expect([...HOST_VERSIONS].sort(compareVersions)).toEqual([...HOST_VERSIONS]);
    expect(compareVersions("1.10.0", "1.9.2")).toBe(1);
    const hostPackages = Object.entries(manifest.devDependencies as Record<string, string>).filter(
      ([name, spec]) =>
        /^(@mariozechner|@earendil-works)\/pi-coding-agent$/.test(name) || /^npm:.*\/pi-coding-agent@/.test(spec),
    );
    expect(Object.fromEntries(hostPackages)).toEqual(Object.fromEntries(HOST_VERSIONS.map(hostDependency)));
    for (const host of hosts()) expect(host.packageDir.startsWith(join(REPO_ROOT, "node_modules"))).toBe(true);
  });

  it("run all tests on the first, the real-pi tests on the newest, the subset on the rest", () => {
    expect(hosts().map((h) => h.tests)).toEqual(["all", ...HOST_VERSIONS.slice(1, -1).map(() => "subset"), "real-pi"]);
    expect(testInclude(HOST_VERSIONS[0])).toEqual(["test/**/*.test.ts"]);
    expect(testInclude("1.5.2")).toEqual([...SUBSET_TESTS]);
  });

  it("the subset names files that exist (a glob matches files or names tests still to come)", () => {
    const integration = readdirSync(join(REPO_ROOT, "test", "integration"));
    for (const entry of SUBSET_TESTS) {
      expect(entry.startsWith("test/integration/")).toBe(true);
      if (!entry.includes("*")) expect(existsSync(join(REPO_ROOT, entry)), entry).toBe(true);
    }
    expect(integration.filter((f) => /^guard-.*\.test\.ts$/.test(f)).length).toBeGreaterThan(0);
  });
});
