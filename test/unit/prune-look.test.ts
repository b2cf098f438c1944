/**
 * When a session start last looked at a project's prune (src/prune-look.ts): a file of this user's
 * in the agent dir, never in the project; a look within the interval counts, one older or dated in
 * the future does not, and anything but a file is no look.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { PRUNE_INTERVAL_MS } from "../../src/core/constants.ts";
import { lookedRecently, pruneLookPath, recordLook } from "../../src/prune-look.ts";
import { makeTempDir } from "../helpers/temp.ts";

describe("the look at a project's prune", () => {
  it("counts a look within the interval, not an older one nor one dated in the future", async () => {
    const agentDir = await makeTempDir("prune-look-agent");
    const cwd = await makeTempDir("prune-look-project");
    const now = Date.now();
    expect(lookedRecently(agentDir, cwd, now)).toBe(false);
    recordLook(agentDir, cwd, now - PRUNE_INTERVAL_MS + 60_000);
    expect(lookedRecently(agentDir, cwd, now)).toBe(true);
    expect(pruneLookPath(agentDir, cwd).startsWith(agentDir)).toBe(true);
    recordLook(agentDir, cwd, now - PRUNE_INTERVAL_MS - 1);
    expect(lookedRecently(agentDir, cwd, now)).toBe(false);
    recordLook(agentDir, cwd, now + 10 * 60_000);
    expect(lookedRecently(agentDir, cwd, now)).toBe(false);
    // Another project has its own look.
    recordLook(agentDir, cwd, now);
    expect(lookedRecently(agentDir, await makeTempDir("prune-look-other"), now)).toBe(false);
  });

  it("takes a link or a directory in the look's place as no look", async () => {
    const agentDir = await makeTempDir("prune-look-agent-link");
    const cwd = await makeTempDir("prune-look-project-link");
    const path = pruneLookPath(agentDir, cwd);
    mkdirSync(dirname(path), { recursive: true });
    const target = `${path}.target`;
    writeFileSync(target, "");
    symlinkSync(target, path);
    expect(lookedRecently(agentDir, cwd, Date.now())).toBe(false);
    rmSync(path);
    mkdirSync(path);
    expect(lookedRecently(agentDir, cwd, Date.now())).toBe(false);
  });
});
