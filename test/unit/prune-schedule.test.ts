/**
 * When the retention prune runs by itself (docs/configuration.md, "When the retention prune runs"): at
 * most once a day per project, by this user's signed mark; a forged, copied, linked, damaged or
 * future-dated mark is no mark, so it can make a prune run sooner, never stop or widen one.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { delegateRoot } from "../../src/store/task-paths.ts";
import { userAgentDir } from "../../src/store/tree-trust.ts";
import { lastPrune, markPrune, PRUNE_INTERVAL_MS, pruneDue, pruneMarkPath } from "../../src/tasks/prune-schedule.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");

/** A project whose store holds one ended tree (a mark is written only where there is history to prune). */
async function project(name = "prune-schedule"): Promise<string> {
  const cwd = await makeTempDir(name, "each");
  mkdirSync(delegateRoot(cwd), { recursive: true });
  writeCompletedTask(cwd);
  return cwd;
}

describe("the daily retention prune", () => {
  it("writes no mark into a store with no tree, nor through a linked .pi/delegate", async () => {
    const empty = await makeTempDir("prune-schedule-empty", "each");
    mkdirSync(delegateRoot(empty), { recursive: true });
    markPrune(empty, userAgentDir(), NOW);
    expect(existsSync(pruneMarkPath(empty))).toBe(false);
    const target = await project("prune-schedule-target");
    const linked = await makeTempDir("prune-schedule-linked", "each");
    mkdirSync(join(linked, ".pi"));
    symlinkSync(delegateRoot(target), delegateRoot(linked));
    markPrune(linked, userAgentDir(), NOW);
    expect(existsSync(pruneMarkPath(target))).toBe(false);
  });

  it("is due without a mark, not within a day of this user's mark, due again after a day", async () => {
    const cwd = await project();
    const agentDir = userAgentDir();
    expect(pruneDue(cwd, agentDir, NOW)).toBe(true);
    markPrune(cwd, agentDir, NOW);
    expect(lastPrune(cwd, agentDir, NOW)).toBe(NOW);
    expect(pruneDue(cwd, agentDir, NOW + PRUNE_INTERVAL_MS - 1)).toBe(false);
    expect(pruneDue(cwd, agentDir, NOW + PRUNE_INTERVAL_MS)).toBe(true);
  });

  it("a forged, damaged, linked or future-dated mark is no mark: the prune is due", async () => {
    const cwd = await project();
    const agentDir = userAgentDir();
    markPrune(cwd, agentDir, NOW);
    const real = readFileSync(pruneMarkPath(cwd), "utf8");
    const forged = real.replace(/"mac":"[0-9a-f]{64}"/, `"mac":"${"0".repeat(64)}"`);
    const redated = real.replace(nowIso(), new Date(NOW + 1000).toISOString());
    for (const bad of [forged, redated, real.slice(0, 20), "", "{}\n", '{"at":"2026-06-01T12:00:00.000Z"}\n']) {
      writeFileSync(pruneMarkPath(cwd), bad);
      expect(pruneDue(cwd, agentDir, NOW + 1)).toBe(true);
    }
    // Yours but dated in the future (a clock set back later): no mark.
    markPrune(cwd, agentDir, NOW + 10 * PRUNE_INTERVAL_MS);
    expect(pruneDue(cwd, agentDir, NOW)).toBe(true);
    // A link to a valid mark is not followed.
    const elsewhere = join(await makeTempDir("prune-schedule-target", "each"), "mark.json");
    writeFileSync(elsewhere, real);
    const linked = await project("prune-schedule-linked");
    symlinkSync(elsewhere, pruneMarkPath(linked));
    expect(pruneDue(linked, agentDir, NOW + 1)).toBe(true);
  });

  it("a mark signed for another project is not this project's", async () => {
    const cwd = await project();
    const other = await project("prune-schedule-other");
    markPrune(other, userAgentDir(), NOW);
    writeFileSync(pruneMarkPath(cwd), readFileSync(pruneMarkPath(other)));
    expect(pruneDue(cwd, userAgentDir(), NOW + 1)).toBe(true);
  });

  it("no store yet: nothing is written and the prune stays due", async () => {
    const cwd = await makeTempDir("prune-schedule-empty", "each");
    markPrune(cwd, userAgentDir(), NOW);
    expect(pruneDue(cwd, userAgentDir(), NOW + 1)).toBe(true);
  });
});

function nowIso(): string {
  return new Date(NOW).toISOString();
}
