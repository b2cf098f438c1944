/**
 * docs/configuration.md counts the package's settings as loadSettings reads them (it said "four" while
 * describing seven), and names each of them as `bgDelegate.<name>`; docs/failure-codes.md gives a
 * cancel the state it ends in.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/hosts.mjs";
import { SETTING_POLICIES } from "../../src/core/setting-trust.ts";
import { loadSettings } from "../../src/core/settings.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

describe("the configuration and failure-code docs", () => {
  it("says how many settings there are and names every one", () => {
    const doc = readFileSync(join(REPO_ROOT, "docs/configuration.md"), "utf8");
    const settings = loadSettings(makeTempDirSync("no-agent"), makeTempDirSync("no-project"), {});
    // Every setting loadSettings gives has its rule in the one list (`ignored` is what it set aside).
    const loaded = Object.keys(settings)
      .filter((k) => k !== "ignored")
      .map((k) => (k === "fusionCandidates" ? "fusion.candidates" : k));
    const names = SETTING_POLICIES.map((p) => p.key);
    expect([...loaded].sort()).toEqual([...names].sort());
    expect(doc).toContain(`The package has ${NUMBER_WORDS[names.length]} settings.`);
    for (const name of names) expect(doc).toContain(`bgDelegate.${name}`);
  });

  it("failure-codes.md says a cancelled task ends cancelled, as finalize records it, and every other run code failed", () => {
    const rows = readFileSync(join(REPO_ROOT, "docs/failure-codes.md"), "utf8").split("\n");
    const cancelled = rows.find((r) => r.startsWith("| `child_cancelled` |"));
    expect(cancelled).toContain("The task ends as cancelled (state `cancelled`)");
    expect(cancelled).not.toContain("ends as failed");
    expect(rows.find((r) => r.startsWith("| `child_timeout` |"))).toContain("The task ends as failed");
  });
});
