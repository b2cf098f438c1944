import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { visibleWidth } from "@mariozechner/pi-tui";
import { afterEach, describe, expect, it } from "vitest";
import { FUSION_ROOT } from "../../src/core/constants.ts";
import { GROUP_NAME_MAX_CHARS, groupFor, type TaskGroup } from "../../src/core/group.ts";
import type { DelegateManifest } from "../../src/core/types.ts";
import type { FusionRunRecord } from "../../src/fusion/run-record.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import type { LiveRun, LiveTask, RunChild } from "../../src/tasks/live.ts";
import { getRegistry } from "../../src/tasks/registry.ts";
import { emptyRunUsage } from "../../src/tasks/run-usage.ts";
import { type FooterTheme, footerText, PLAIN_THEME } from "../../src/ui/footer.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const RUN_ID = `f${"1a2b3c4d".repeat(4)}`;
const route = { provider: "fake", model: "model-a" };

function candidate(slot: string, verified: boolean | undefined): RunChild {
  return {
    stage: "candidate",
    slot,
    attempt: 1,
    taskId: `d${slot.slice(-1).repeat(32)}`,
    route,
    running: verified === undefined,
    ...(verified === undefined ? {} : { verified }),
  };
}

/** A live run as the footer reads it: id, cwd, name, candidates, stage, children and start time. */
function liveRun(
  cwd: string,
  stage: LiveRun["stage"],
  children: RunChild[],
  createdAt: number,
  limits?: FusionRunRecord["limits"],
): LiveRun {
  const record = { name: "cache question", candidates: [route, route, route], ...(limits ? { limits } : {}) } as Pick<
    FusionRunRecord,
    "name" | "candidates"
  >;
  return { runId: RUN_ID, cwd, stage, children, createdAt, record, usage: emptyRunUsage() } as unknown as LiveRun;
}

const TASK_ID = `d${"5e6f".repeat(8)}`;

afterEach(() => {
  getRegistry().runs.delete(RUN_ID);
  getRegistry().delegates.delete(TASK_ID);
});

describe("the footer's Fusion part", () => {
  it("shows a live run's stage and verified candidates, not its children one by one", async () => {
    const cwd = await makeTempDir("footer");
    const now = 1_000_000;
    expect(footerText(cwd, now)).toBeUndefined();
    getRegistry().runs.set(
      RUN_ID,
      liveRun(
        cwd,
        "evaluate",
        [candidate("candidate-1", true), candidate("candidate-2", true), candidate("candidate-3", false)],
        now - 45_000,
      ),
    );
    expect(footerText(cwd, now)).toBe(
      "⧗ fusion f1a2b3c4d (cache question): comparing the answers, 2/3 candidates verified 45s │ delegate spend: $0.0000 (not in the session's $)",
    );
    // Another project's footer does not show it.
    expect(footerText(await makeTempDir("footer-other"), now)).toBeUndefined();
  });

  it("a capped run shows what its children spent against the run's cap", async () => {
    const cwd = await makeTempDir("footer-cap");
    const now = 3_000_000;
    const limits = { max_turns: 1, max_tool_calls: 1, timeout_seconds: 60, max_cost_usd: 2 };
    const run = liveRun(cwd, "evaluate", [candidate("candidate-1", true)], now - 5_000, limits);
    run.usage.counts.cost_total = 0.042;
    getRegistry().runs.set(RUN_ID, run);
    expect(footerText(cwd, now)).toContain("comparing the answers, 1/3 candidates verified 5s · $0.0420 of $2.00 cap");
  });

  it("colours its parts with Pi's theme", async () => {
    const cwd = await makeTempDir("footer-theme");
    const now = 2_000_000;
    getRegistry().runs.set(RUN_ID, liveRun(cwd, "candidate", [candidate("candidate-1", undefined)], now - 3_000));
    const tagged: FooterTheme = { fg: (color, text) => `<${color}>${text}</${color}>` };
    expect(footerText(cwd, now, tagged)).toBe(
      "<warning>⧗</warning> <accent>fusion f1a2b3c4d</accent> <muted>(cache question)</muted>: asking the candidates, 0/3 candidates verified <dim>3s</dim>" +
        "<dim> │ </dim><dim>delegate spend: $0.0000 (not in the session's $)</dim>",
    );
  });
});

describe("the footer's delegate part", () => {
  /** A running delegate as the registry holds it, its progress.json written as the guard writes it. */
  async function runningDelegate(maxCostUsd: number | undefined, startedAt: number): Promise<string> {
    const cwd = await makeTempDir("footer-delegate");
    const taskDir = await makeTempDir("footer-delegate-task");
    writeFileSync(join(taskDir, "progress.json"), JSON.stringify({ turns: 3, tool_calls: 1, cost_total: 0.0123 }));
    const limits = {
      max_turns: 24,
      max_tool_calls: 120,
      timeout_seconds: 900,
      ...(maxCostUsd ? { max_cost_usd: maxCostUsd } : {}),
    };
    const task = {
      taskId: TASK_ID,
      taskDir,
      cwd,
      startedAt,
      manifest: { name: "map auth", limits },
    } as unknown as LiveTask;
    getRegistry().delegates.set(TASK_ID, task);
    return cwd;
  }

  it("a capped running delegate shows its spend against its cap", async () => {
    const now = 4_000_000;
    const cwd = await runningDelegate(0.5, now - 12_000);
    expect(footerText(cwd, now)).toBe(
      "⧗ map auth 12s · 3 turns · 1 tool call · $0.0123 of $0.5000 cap │ delegate spend: $0.0123 (not in the session's $)",
    );
  });

  it("an uncapped running delegate shows no cap", async () => {
    const now = 4_000_000;
    const cwd = await runningDelegate(undefined, now - 12_000);
    const text = footerText(cwd, now);
    expect(text).toContain("⧗ map auth 12s · 3 turns · 1 tool call │ delegate spend: $0.0123");
    expect(text).not.toContain("cap");
  });
});

describe("the footer's total of ended delegates", () => {
  it("is a floor ('at least') when an ended task's recorded figure is one", async () => {
    const cwd = await makeTempDir("footer-at-least");
    const task = writeCompletedTask(cwd);
    // As a cancel with a request in flight records it (src/tasks/adjudicate-task.ts).
    const cancelled: DelegateManifest = {
      ...task.manifest,
      state: "cancelled",
      terminal: {
        ended_at: task.manifest.terminal?.ended_at ?? new Date().toISOString(),
        code: "child_cancelled",
        message: "cancelled",
        cost_total: 0.0603,
        cost_at_least: true,
      },
    };
    writeManifest(task.taskDir, cancelled); // signed, as the parent's adjudication writes it
    getRegistry().known.set(task.manifest.task_id, task.taskDir);
    try {
      expect(footerText(cwd)).toBe("delegate spend: at least $0.0603 (not in the session's $)");
      // What Pi's own $ counts of it (the usage bg_result results carried) is said beside it.
      expect(footerText(cwd, Date.now(), PLAIN_THEME, Number.POSITIVE_INFINITY, 0.0603)).toBe(
        "delegate spend: at least $0.0603 · $0.0603 counted in the session's $",
      );
    } finally {
      getRegistry().known.delete(task.manifest.task_id);
    }
  });
});

describe('the footer\'s groups (docs/subsystems/retrieval.md, "`/delegates` and the footer")', () => {
  const SESSION = "footer-group-session";
  const held: string[] = [];
  afterEach(() => {
    for (const id of held.splice(0)) {
      getRegistry().delegates.delete(id);
      getRegistry().runs.delete(id);
      getRegistry().known.delete(id);
      getRegistry().endedGroupedRuns.delete(id);
    }
  });

  /** A running delegate of `group` (none: of its own) held by the registry, started `seconds` before `now`. */
  async function running(cwd: string, n: number, name: string, group: TaskGroup | undefined, startedAt: number) {
    const taskId = `d${String(n).repeat(32)}`;
    const taskDir = await makeTempDir("footer-group-task");
    writeFileSync(join(taskDir, "progress.json"), JSON.stringify({ turns: 1, tool_calls: 2, cost_total: 0.001 }));
    const limits = { max_turns: 24, max_tool_calls: 120, timeout_seconds: 900 };
    const manifest = { name, limits, ...(group ? { group } : {}) };
    getRegistry().delegates.set(taskId, { taskId, taskDir, cwd, startedAt, manifest } as unknown as LiveTask);
    held.push(taskId);
  }

  /** A member of `group` this process started that ended: its tree signed with the group, known to the registry. */
  function ended(cwd: string, group: TaskGroup): void {
    const task = writeCompletedTask(cwd, { session: SESSION, name: "ended member" });
    writeManifest(task.taskDir, { ...task.manifest, group });
    getRegistry().known.set(task.manifest.task_id, task.taskDir);
    held.push(task.manifest.task_id);
  }

  it("draws a group's running members as one entry: running of the members launched, since the oldest running one", async () => {
    const cwd = await makeTempDir("footer-group");
    const now = 5_000_000;
    const audit = groupFor(SESSION, "auth-audit")!;
    await running(cwd, 1, "session cookie checks", audit, now - 20_000);
    await running(cwd, 2, "token refresh path", audit, now - 12_000);
    await running(cwd, 3, "map auth", undefined, now - 30_000);
    ended(cwd, audit);
    const text = footerText(cwd, now);
    expect(text).toMatch(
      /^⧗ map auth 30s · 1 turn · 2 tool calls │ ⧗ group auth-audit: 2\/3 running 20s │ delegate spend: \$0\.\d{4} \(not in the session's \$\)$/,
    );
    // Its members are not drawn one by one.
    expect(text).not.toContain("session cookie checks");
    // A group with the same name in another session is another group.
    await running(cwd, 4, "elsewhere", groupFor("another-session", "auth-audit"), now - 2_000);
    expect(footerText(cwd, now)).toContain("⧗ group auth-audit: 1/1 running 2s");
  });

  it("counts a grouped Fusion run as one member, still after it ended; its children are not listed", async () => {
    const cwd = await makeTempDir("footer-group-run");
    const now = 6_000_000;
    const audit = groupFor(SESSION, "auth-audit")!;
    const runId = `f${"9".repeat(32)}`;
    const run = liveRun(cwd, "candidate", [candidate("candidate-7", undefined)], now - 40_000);
    Object.assign(run, { runId, runDir: join(cwd, FUSION_ROOT, runId), record: { ...run.record, group: audit } });
    getRegistry().runs.set(runId, run);
    held.push(runId);
    await running(cwd, 5, "token refresh path", audit, now - 10_000);
    expect(footerText(cwd, now)).toMatch(/^⧗ group auth-audit: 2\/2 running 40s │ delegate spend: /);
    // Committed: the registry forgets it but keeps it among the ended grouped runs (as recordRunEnd
    // does), which outlive a /reload of the extension; the footer still counts it.
    getRegistry().endedGroupedRuns.set(runId, { runDir: run.runDir, group: audit });
    getRegistry().runs.delete(runId);
    expect(footerText(cwd, now)).toMatch(/^⧗ group auth-audit: 1\/2 running 10s │ delegate spend: /);
  });

  it("fits 80 columns with a CJK, emoji or 64-character group name, and counts members left out", async () => {
    const now = 7_000_000;
    const names = ["認証監査🔐チーム", "x".repeat(GROUP_NAME_MAX_CHARS), "🦀🦀🦀 crab 監査 audit of everything"];
    for (const name of names) {
      const cwd = await makeTempDir("footer-group-wide");
      const group = groupFor(SESSION, name)!;
      await running(cwd, 6, "first", group, now - 9_000);
      await running(cwd, 7, "second", group, now - 8_000);
      await running(cwd, 8, "map auth", undefined, now - 7_000);
      const line = footerText(cwd, now, PLAIN_THEME, 80)!;
      expect(visibleWidth(line)).toBeLessThanOrEqual(80);
      expect(line).toMatch(/ 2\/2 9s │ ⧗ map auth 7s │ delegates: \$0\.0030$/);
      for (const id of held.splice(0)) getRegistry().delegates.delete(id);
    }
    // Narrower, the entry left out is counted by the members it stands for.
    const cwd = await makeTempDir("footer-group-narrow");
    const group = groupFor(SESSION, names[0]!)!;
    await running(cwd, 6, "first", group, now - 9_000);
    await running(cwd, 7, "second", group, now - 8_000);
    await running(cwd, 8, "map auth", undefined, now - 7_000);
    expect(footerText(cwd, now, PLAIN_THEME, 55)).toBe("+2 more running │ ⧗ map auth 7s │ delegates: $0.0030");
    expect(footerText(cwd, now, PLAIN_THEME, 30)).toBe("3 running │ delegates: $0.0030");
  });

  it("colours a group's entry with Pi's theme", async () => {
    const cwd = await makeTempDir("footer-group-theme");
    const now = 8_000_000;
    await running(cwd, 9, "first", groupFor(SESSION, "auth-audit"), now - 3_000);
    const tagged: FooterTheme = { fg: (color, text) => `<${color}>${text}</${color}>` };
    expect(footerText(cwd, now, tagged)).toMatch(
      /^<warning>⧗<\/warning> <muted>group<\/muted> <accent>auth-audit<\/accent>: 1\/1 running <dim>3s<\/dim><dim> │ <\/dim>/,
    );
  });
});
