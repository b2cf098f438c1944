import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETENTION_DAYS } from "../../src/core/constants.ts";
import { loadSettings } from "../../src/core/settings.ts";
import { makeTempDir } from "../helpers/temp.ts";

async function dirsWith(user: unknown, project: unknown) {
  const agentDir = await makeTempDir("settings-agent");
  const cwd = await makeTempDir("settings-proj");
  mkdirSync(join(cwd, ".pi"));
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ bgDelegate: user }));
  writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: project }));
  return { agentDir, cwd };
}

describe("bgDelegate.retentionDays", () => {
  it("defaults to 30 days; the environment, then the project, then the user's file wins", async () => {
    expect(DEFAULT_RETENTION_DAYS).toBe(30);
    const none = await dirsWith({}, {});
    expect(loadSettings(none.agentDir, none.cwd, {}).retentionDays).toBe(30);
    const both = await dirsWith({ retentionDays: 7 }, { retentionDays: "0" });
    expect(loadSettings(both.agentDir, both.cwd, {}).retentionDays).toBe(0);
    expect(loadSettings(both.agentDir, both.cwd, { PI_BG_DELEGATE_RETENTION_DAYS: "2.5" }).retentionDays).toBe(2.5);
    const user = await dirsWith({ retentionDays: 7 }, {});
    expect(loadSettings(user.agentDir, user.cwd, {}).retentionDays).toBe(7);
  });

  it("skips a value that is not a number ≥ 0 and consults the next source", async () => {
    const bad = await dirsWith({ retentionDays: 9 }, { retentionDays: -1 });
    expect(loadSettings(bad.agentDir, bad.cwd, { PI_BG_DELEGATE_RETENTION_DAYS: "soon" }).retentionDays).toBe(9);
    const worse = await dirsWith({ retentionDays: "" }, { retentionDays: true });
    expect(loadSettings(worse.agentDir, worse.cwd, {}).retentionDays).toBe(30);
  });
});

describe("bgDelegate.fusion.candidates", () => {
  const a = { provider: "p", model: "a" };
  const b = { provider: "p", model: "b" };
  it("is unset by default; the project's list wins over the user's", async () => {
    const none = await dirsWith({}, {});
    expect(loadSettings(none.agentDir, none.cwd, {}).fusionCandidates).toBeUndefined();
    const both = await dirsWith({ fusion: { candidates: [a, a] } }, { fusion: { candidates: [a, b] } });
    expect(loadSettings(both.agentDir, both.cwd, {}).fusionCandidates).toEqual({ routes: [a, b] });
  });

  it("reports a malformed list instead of ignoring it", async () => {
    const one = await dirsWith({}, { fusion: { candidates: [a] } });
    expect(loadSettings(one.agentDir, one.cwd, {}).fusionCandidates).toEqual({
      problem: "bgDelegate.fusion.candidates: must have at least 2 entries",
    });
    const extra = await dirsWith({ fusion: { candidates: [a, { ...b, thinking: "high" }] } }, {});
    expect(loadSettings(extra.agentDir, extra.cwd, {}).fusionCandidates).toEqual({
      problem: "bgDelegate.fusion.candidates[1].thinking: is not a known key",
    });
  });
});
