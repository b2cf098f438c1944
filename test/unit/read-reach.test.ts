/**
 * The path rule of what a delegate may read (docs/subsystems/child-guard.md, "What a delegate may
 * read"): real locations through links, the project and granted roots, the closed places, Pi's ways
 * of naming a path, the walk filter, and who may set bgDelegate.readRoots (docs/configuration.md).
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { reachCallRefusal, withheldWalk } from "../../src/child/reach-check.ts";
import { piPathCandidates, resolveLikePi } from "../../src/core/project-path.ts";
import { buildReach, closedBelow, reachRefusal, realLocation, within } from "../../src/core/read-reach.ts";
import { loadSettings } from "../../src/core/settings.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** base/{proj,outside,granted,agent}, with links in the project pointing out. */
async function layout() {
  const base = await makeTempDir("reach-unit");
  const proj = join(base, "proj");
  const outside = join(base, "outside");
  const granted = join(base, "granted");
  for (const dir of [proj, outside, granted, join(granted, "agent"), join(proj, ".pi", "delegate", "s", "t")]) {
    mkdirSync(dir, { recursive: true });
  }
  writeFileSync(join(outside, "secret"), "x");
  writeFileSync(join(proj, "own"), "x");
  symlinkSync(join(outside, "secret"), join(proj, "link-out"));
  symlinkSync(outside, join(proj, "dir-out"));
  symlinkSync(join(proj, "own"), join(outside, "link-in"));
  return { base, proj, outside, granted, agentDir: join(granted, "agent") };
}

describe("the real location of a path", () => {
  it("follows every link, and places a missing name under its nearest existing ancestor's real path", async () => {
    const { proj, outside } = await layout();
    expect(realLocation(join(proj, "link-out"))).toBe(realLocation(join(outside, "secret")));
    expect(realLocation(join(proj, "dir-out", "not-there", "x"))).toBe(join(realLocation(outside), "not-there", "x"));
    expect(within(join(proj, "a"), proj)).toBe(true);
    expect(within(proj, proj)).toBe(true);
    expect(within(`${proj}-sibling`, proj)).toBe(false);
    expect(within(join(proj, ".."), proj)).toBe(false);
  });
});

describe("reachRefusal", () => {
  it("admits the project and granted roots, refuses outward paths and links, and closes the agent dir and stores", async () => {
    const { proj, outside, granted, agentDir } = await layout();
    const reach = buildReach(proj, [granted], agentDir);
    const outsideWhy =
      "its real location is outside the project and outside the directories you granted (bgDelegate.readRoots)";
    expect(reachRefusal(reach, join(proj, "own"))).toBeUndefined();
    expect(reachRefusal(reach, join(proj, "missing"))).toBeUndefined();
    expect(reachRefusal(reach, join(granted, "shared"))).toBeUndefined();
    expect(reachRefusal(reach, join(outside, "link-in"))).toBeUndefined(); // really in the project
    expect(reachRefusal(reach, join(outside, "secret"))).toBe(outsideWhy);
    expect(reachRefusal(reach, join(proj, "link-out"))).toBe(outsideWhy);
    expect(reachRefusal(reach, join(proj, "dir-out", "secret"))).toBe(outsideWhy);
    expect(reachRefusal(reach, join(proj, "dir-out", "missing"))).toBe(outsideWhy);
    expect(reachRefusal(reach, "/")).toBe(outsideWhy);
    // Granted, but Pi's agent dir inside the grant stays closed; so do the stores inside the project.
    expect(reachRefusal(reach, join(agentDir, "auth.json"))).toMatch(/^it lies in Pi's agent directory/);
    expect(reachRefusal(reach, join(proj, ".pi", "delegate", "s", "t", "seed.json"))).toMatch(
      /^it lies in the delegate store/,
    );
    expect(reachRefusal(reach, join(proj, ".pi", "fusion"))).toMatch(/^it lies in the Fusion store/);
    expect(reachRefusal(reach, join(proj, ".pi"))).toBeUndefined();
    // Pi's default agent dir is closed too, whichever one this child runs on.
    expect(reachRefusal(reach, join(homedir(), ".pi", "agent", "auth.json"))).toMatch(
      /^it lies in Pi's agent directory/,
    );
  });

  it("closes the agent dir even when it lies inside the project", async () => {
    const { proj } = await layout();
    const agentDir = join(proj, "agent");
    mkdirSync(agentDir);
    const reach = buildReach(proj, [], agentDir);
    expect(reachRefusal(reach, join(agentDir, "settings.json"))).toMatch(/^it lies in Pi's agent directory/);
    expect(closedBelow(reach, proj)).toEqual(["agent", ".pi/delegate", ".pi/fusion"]);
    expect(reach.closed.map((place) => place.kind)).toEqual(["agent_dir", "agent_dir", "store", "store"]);
    expect(closedBelow(reach, join(proj, ".pi"))).toEqual(["delegate", "fusion"]);
    expect(closedBelow(reach, agentDir)).toEqual([]);
  });
});

describe("the paths Pi may open for a tool's `path`", () => {
  it("resolves as both hosts do: @, ~, Unicode spaces, file:// URLs, and read's name variants", () => {
    expect(resolveLikePi("@src/a.ts", "/p")).toBe("/p/src/a.ts");
    expect(resolveLikePi("~/x", "/p")).toBe(join(homedir(), "x"));
    expect(resolveLikePi("a\u00A0b", "/p")).toBe("/p/a b");
    expect(piPathCandidates("file:///etc/passwd", "/p", false)).toEqual(["/p/file:/etc/passwd", "/etc/passwd"]);
    expect(piPathCandidates("it's", "/p", true)).toContain("/p/it\u2019s");
    expect(piPathCandidates("shot 1 PM.png", "/p", true)).toContain("/p/shot 1\u202FPM.png");
    expect(piPathCandidates("a", "/p", false)).toEqual(["/p/a"]);
  });

  it("refuses a built-in tool call when any of them lies outside, and leaves other tools alone", async () => {
    const { proj, outside, agentDir } = await layout();
    const reach = buildReach(proj, [], agentDir);
    expect(reachCallRefusal(reach, "read", { path: "own" }, proj)).toBeUndefined();
    expect(reachCallRefusal(reach, "ls", {}, proj)).toBeUndefined();
    const viaUrl = reachCallRefusal(reach, "read", { path: `file://${join(outside, "secret")}` }, proj);
    expect(viaUrl?.reason).toContain("is not readable by this delegate: its real location is outside the project");
    expect(reachCallRefusal(reach, "grep", { pattern: "x", path: "../outside" }, proj)?.block).toBe(true);
    expect(reachCallRefusal(reach, "find", { pattern: "*", path: "dir-out" }, proj)?.block).toBe(true);
    expect(reachCallRefusal(reach, "delegate_read_artifact", { artifact: "../../x" }, proj)).toBeUndefined();
  });

  it("withholds a walk whose output names a closed place below its path, and keeps any other", async () => {
    const { proj, agentDir } = await layout();
    const inside = buildReach(proj, [], join(proj, "agent"));
    const text = (t: string) => [{ type: "text", text: t }];
    const withheld = withheldWalk(inside, "grep", { pattern: "k" }, proj, text("own:1: k\nagent/auth.json:1: key"));
    expect(withheld).toMatch(/^\[delegate\] The grep output was withheld: it reached agent,/);
    expect(withheldWalk(inside, "find", { pattern: "*", path: "." }, proj, text(".pi/delegate/s/t/seed.json"))).toMatch(
      /reached \.pi\/delegate,/,
    );
    expect(withheldWalk(inside, "grep", { pattern: "k" }, proj, text("own:1: k\nagentx:1: k"))).toBeUndefined();
    expect(withheldWalk(inside, "ls", {}, proj, text("agent/"))).toBeUndefined();
    const apart = buildReach(proj, [], agentDir);
    expect(withheldWalk(apart, "grep", { pattern: "k" }, proj, text("agent/auth.json:1: key"))).toBeUndefined();
  });
});

describe("bgDelegate.readRoots", () => {
  async function dirs(user: unknown, project: unknown) {
    const { base, granted } = await layout();
    const agentDir = join(base, "agent-home");
    const cwd = join(base, "proj");
    mkdirSync(agentDir);
    mkdirSync(join(cwd, ".pi"), { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ bgDelegate: user }));
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: project }));
    return { agentDir, cwd, base, granted };
  }

  it("is empty by default; comes from the environment (path-delimiter separated), else user settings", async () => {
    const none = await dirs({}, {});
    expect(loadSettings(none.agentDir, none.cwd, {}).readRoots).toEqual([]);
    const user = await dirs({ readRoots: ["/srv/a"] }, {});
    expect(loadSettings(user.agentDir, user.cwd, {}).readRoots).toEqual(["/srv/a"]);
    const env = { PI_BG_DELEGATE_READ_ROOTS: ["/srv/b", "", "/srv/c"].join(delimiter) };
    expect(loadSettings(user.agentDir, user.cwd, env).readRoots).toEqual(["/srv/b", "/srv/c"]);
  });

  it("skips a value with a relative or non-string entry", async () => {
    const bad = await dirs({ readRoots: ["/srv/a", "rel"] }, {});
    expect(loadSettings(bad.agentDir, bad.cwd, {}).readRoots).toEqual([]);
    expect(loadSettings(bad.agentDir, bad.cwd, { PI_BG_DELEGATE_READ_ROOTS: "rel" }).readRoots).toEqual([]);
    const worse = await dirs({ readRoots: [1] }, {});
    expect(loadSettings(worse.agentDir, worse.cwd, {}).readRoots).toEqual([]);
  });

  it("lets any project narrow it to directories really inside yours, and ignores and names a widening, trusted or not", async () => {
    const { base } = await dirs({}, {});
    const granted = join(base, "granted");
    const narrower = await dirs({ readRoots: [granted] }, { readRoots: [join(granted, "sub")] });
    expect(loadSettings(narrower.agentDir, narrower.cwd, {}).readRoots).toEqual([join(granted, "sub")]);
    const none = await dirs({ readRoots: [granted] }, { readRoots: [] });
    expect(loadSettings(none.agentDir, none.cwd, {}).readRoots).toEqual([]);
    for (const trusted of [false, true]) {
      const wider = await dirs({ readRoots: [granted] }, { readRoots: ["/"] });
      const settings = loadSettings(wider.agentDir, wider.cwd, {}, { projectTrusted: trusted });
      expect(settings.readRoots).toEqual([granted]);
      expect(settings.ignored).toHaveLength(1);
      expect(settings.ignored[0]).toMatch(
        /^bgDelegate\.readRoots \["\/"\] in \.pi\/settings\.json ignored: a project may only name directories inside yours \(yours: /,
      );
    }
    // A link inside your root pointing out is not inside it.
    const linked = await dirs({}, {});
    symlinkSync(join(linked.base, "outside"), join(linked.granted, "out"));
    writeFileSync(
      join(linked.agentDir, "settings.json"),
      JSON.stringify({ bgDelegate: { readRoots: [linked.granted] } }),
    );
    const out = { bgDelegate: { readRoots: [join(linked.granted, "out")] } };
    writeFileSync(join(linked.cwd, ".pi", "settings.json"), JSON.stringify(out));
    expect(loadSettings(linked.agentDir, linked.cwd, {}).readRoots).toEqual([linked.granted]);
    const unset = await dirs({}, { readRoots: ["/etc"] });
    expect(loadSettings(unset.agentDir, unset.cwd, {}).readRoots).toEqual([]);
    expect(loadSettings(unset.agentDir, unset.cwd, {}).ignored[0]).toContain("(yours: [])");
  });
});
