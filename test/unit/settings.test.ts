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
  it("defaults to 30 days; the environment, else the user's file; a project may keep trees longer", async () => {
    expect(DEFAULT_RETENTION_DAYS).toBe(30);
    const none = await dirsWith({}, {});
    expect(loadSettings(none.agentDir, none.cwd, {}).retentionDays).toBe(30);
    const both = await dirsWith({ retentionDays: 7 }, { retentionDays: "0" });
    expect(loadSettings(both.agentDir, both.cwd, {}).retentionDays).toBe(0);
    // A project's 0 (never pruned) keeps longer than the environment's 2.5 days, so it holds too.
    expect(loadSettings(both.agentDir, both.cwd, { PI_BG_DELEGATE_RETENTION_DAYS: "2.5" }).retentionDays).toBe(0);
    const sooner = await dirsWith({ retentionDays: 7 }, { retentionDays: 1 });
    expect(loadSettings(sooner.agentDir, sooner.cwd, { PI_BG_DELEGATE_RETENTION_DAYS: "2.5" }).retentionDays).toBe(2.5);
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
  it("is unset by default; yours hold over an untrusted project's, a trusted project's win", async () => {
    const none = await dirsWith({}, {});
    expect(loadSettings(none.agentDir, none.cwd, {}).fusionCandidates).toBeUndefined();
    const both = await dirsWith({ fusion: { candidates: [a, a] } }, { fusion: { candidates: [a, b] } });
    expect(loadSettings(both.agentDir, both.cwd, {}).fusionCandidates).toEqual({ routes: [a, a] });
    expect(loadSettings(both.agentDir, both.cwd, {}, { projectTrusted: true }).fusionCandidates).toEqual({
      routes: [a, b],
    });
  });

  it("reports a malformed list of yours instead of ignoring it; a project's is ignored and named", async () => {
    const one = await dirsWith({ fusion: { candidates: [a] } }, {});
    expect(loadSettings(one.agentDir, one.cwd, {}).fusionCandidates).toEqual({
      problem: "bgDelegate.fusion.candidates: must have at least 2 entries",
    });
    const project = await dirsWith({}, { fusion: { candidates: [a] } });
    const settings = loadSettings(project.agentDir, project.cwd, {});
    expect(settings.fusionCandidates).toBeUndefined();
    expect(settings.ignored).toEqual([
      'bgDelegate.fusion.candidates "(malformed)" in .pi/settings.json ignored: it chooses which models your conversation is sent to (yours: unset)',
    ]);
    const extra = await dirsWith({ fusion: { candidates: [a, { ...b, thinking: "high" }] } }, {});
    expect(loadSettings(extra.agentDir, extra.cwd, {}).fusionCandidates).toEqual({
      problem: "bgDelegate.fusion.candidates[1].thinking: is not a known key",
    });
  });
});

describe("only you widen trust (docs/configuration.md, Who may set what)", () => {
  const a = { provider: "p", model: "a" };
  const b = { provider: "p", model: "b" };
  const widening = {
    piCli: "tools/fakepi/dist/cli.js",
    maxRunning: 9,
    maxCostUsd: 50,
    selfProof: true,
    retentionDays: 1,
    fusion: { candidates: [a, b] },
  };
  const yours = { maxRunning: 2, maxCostUsd: 1, selfProof: false, retentionDays: 10 };

  it("an untrusted project that widens every key changes nothing, and each key is named once with why", async () => {
    const { agentDir, cwd } = await dirsWith(yours, widening);
    const settings = loadSettings(agentDir, cwd, {});
    expect(settings).toMatchObject({
      piCli: undefined,
      maxRunning: 2,
      maxCostUsd: { usd: 1 },
      selfProof: false,
      retentionDays: 10,
      fusionCandidates: undefined,
    });
    expect(settings.ignored).toEqual([
      "bgDelegate.maxRunning 9 in .pi/settings.json ignored: a project may only lower it (yours: 2)",
      'bgDelegate.piCli "tools/fakepi/dist/cli.js" in .pi/settings.json ignored: it chooses the code that runs as your delegates (yours: unset)',
      "bgDelegate.retentionDays 1 in .pi/settings.json ignored: a project may only keep trees longer (yours: 10)",
      "bgDelegate.selfProof true in .pi/settings.json ignored: a project may only turn self-proof off (yours: false)",
      'bgDelegate.fusion.candidates ["p/a","p/b"] in .pi/settings.json ignored: it chooses which models your conversation is sent to (yours: unset)',
      "bgDelegate.maxCostUsd 50 in .pi/settings.json ignored: a project may only lower the spend cap (yours: 1)",
    ]);
  });

  it("a project may narrow: a lower cap and maxRunning, self-proof off, trees kept longer; nothing is named", async () => {
    const { agentDir, cwd } = await dirsWith(
      { maxRunning: 4, maxCostUsd: 2, retentionDays: 10 },
      { maxRunning: 1, maxCostUsd: 0.5, selfProof: false, retentionDays: 0 },
    );
    const settings = loadSettings(agentDir, cwd, {});
    expect(settings).toMatchObject({ maxRunning: 1, maxCostUsd: { usd: 0.5 }, selfProof: false, retentionDays: 0 });
    expect(settings.ignored).toEqual([]);
    // A project's cap where you set none narrows too; the defaults (4 running, self-proof on) are yours.
    const none = await dirsWith({}, { maxCostUsd: 3, maxRunning: 5, selfProof: true });
    const fromDefaults = loadSettings(none.agentDir, none.cwd, {});
    expect(fromDefaults).toMatchObject({ maxCostUsd: { usd: 3 }, maxRunning: 4, selfProof: true });
    expect(fromDefaults.ignored).toEqual([
      "bgDelegate.maxRunning 5 in .pi/settings.json ignored: a project may only lower it (yours: 4)",
    ]);
  });

  it("the environment is yours: it wins over your file, and an untrusted project may only narrow it", async () => {
    const { agentDir, cwd } = await dirsWith(yours, { maxRunning: 3, piCli: "x.js" });
    const env = { PI_BG_DELEGATE_MAX_RUNNING: "5", PI_BG_DELEGATE_PI_CLI: "/opt/pi/cli.js" };
    const settings = loadSettings(agentDir, cwd, env);
    expect(settings.maxRunning).toBe(3);
    expect(settings.piCli).toBe("/opt/pi/cli.js");
    expect(settings.ignored).toEqual([
      'bgDelegate.piCli "x.js" in .pi/settings.json ignored: it chooses the code that runs as your delegates (yours: "/opt/pi/cli.js")',
    ]);
  });

  it("a trusted project may set what your user settings could, and still not over the environment", async () => {
    const { agentDir, cwd } = await dirsWith(yours, widening);
    const trusted = loadSettings(agentDir, cwd, {}, { projectTrusted: true });
    expect(trusted).toMatchObject({
      piCli: "tools/fakepi/dist/cli.js",
      maxRunning: 9,
      maxCostUsd: { usd: 50 },
      selfProof: true,
      retentionDays: 1,
      fusionCandidates: { routes: [a, b] },
      ignored: [],
    });
    const env = { PI_BG_DELEGATE_MAX_RUNNING: "2", PI_BG_DELEGATE_SELF_PROOF: "0" };
    expect(loadSettings(agentDir, cwd, env, { projectTrusted: true })).toMatchObject({
      maxRunning: 2,
      selfProof: false,
    });
  });

  it("nonInteractive widens nothing: the project's choice wins over yours, the environment over both", async () => {
    const { agentDir, cwd } = await dirsWith({ nonInteractive: "wait" }, { nonInteractive: "cancel" });
    expect(loadSettings(agentDir, cwd, {})).toMatchObject({ nonInteractive: "cancel", ignored: [] });
    expect(loadSettings(agentDir, cwd, { PI_BG_DELEGATE_NON_INTERACTIVE: "wait" }).nonInteractive).toBe("wait");
  });

  it("onExit: only you (or a trusted project) choose finish; any project may choose cancel; a typo is said", async () => {
    const yoursFinish = await dirsWith({ onExit: "finish" }, { onExit: "cancel" });
    expect(loadSettings(yoursFinish.agentDir, yoursFinish.cwd, {})).toMatchObject({ onExit: "cancel", ignored: [] });
    const projectFinish = await dirsWith({}, { onExit: "finish" });
    const untrusted = loadSettings(projectFinish.agentDir, projectFinish.cwd, {});
    expect(untrusted.onExit).toBe("cancel");
    expect(untrusted.ignored).toEqual([
      'bgDelegate.onExit "finish" in .pi/settings.json ignored: a project may only have delegates cancelled when Pi quits (yours: "cancel")',
    ]);
    expect(loadSettings(projectFinish.agentDir, projectFinish.cwd, {}, { projectTrusted: true }).onExit).toBe("finish");
    expect(loadSettings(projectFinish.agentDir, projectFinish.cwd, { PI_BG_DELEGATE_ON_EXIT: "finish" }).onExit).toBe(
      "finish",
    );
    const typo = await dirsWith({ onExit: "finsh" }, {});
    const read = loadSettings(typo.agentDir, typo.cwd, {});
    expect(read.onExit).toBe("cancel");
    expect(read.ignored).toEqual(['bgDelegate.onExit (user) "finsh" ignored: it is not "cancel" or "finish"']);
  });

  it("a project value equal to yours is not named", async () => {
    const { agentDir, cwd } = await dirsWith({ maxRunning: 2, selfProof: true }, { maxRunning: 2, selfProof: true });
    expect(loadSettings(agentDir, cwd, {}).ignored).toEqual([]);
  });
});
