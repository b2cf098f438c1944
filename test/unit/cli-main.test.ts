/**
 * The `pi-bg-delegate` command in process (src/cli/main.ts), on task trees written by the production
 * writers: exit statuses, failure texts, escaping of what a task tree says, and the Fusion runs whose
 * owner died. The real command as a child process is test/integration/cli.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withDelegateDefaults } from "../../src/arguments/delegate-arguments.ts";
import { type CliIo, main } from "../../src/cli/main.ts";
import { FUSION_FILES, SCHEMA } from "../../src/core/constants.ts";
import { groupFor } from "../../src/core/group.ts";
import { buildManifest, newTaskIdentity } from "../../src/launch/task-documents.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import {
  buildCompletedRun,
  buildFailedRun,
  buildStrandedRun,
  failureInput,
  startRun,
  writeCandidates,
  writeRunRecord,
} from "../helpers/fusion-fixtures.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(cwd: string, argv: string[], over: Partial<CliIo> = {}): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    cwd,
    stdout: (data) => {
      stdout += typeof data === "string" ? data : Buffer.from(data).toString("utf8");
    },
    stderr: (text) => {
      stderr += text;
    },
    ...over,
  });
  return { code, stdout, stderr };
}

/** No line of a JavaScript stack trace. */
const STACK = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

function project(): Promise<string> {
  return makeTempDir("cli-main", "each");
}

/** A delegate task recorded as running whose owner (this process) no longer holds it: stale. */
function staleDelegate(cwd: string, name = "stale one"): { id: string; dir: string } {
  const identity = newTaskIdentity(cwd, "cli-main-session");
  mkdirSync(identity.taskDir, { recursive: true });
  writeManifest(identity.taskDir, {
    ...buildManifest({
      identity,
      args: withDelegateDefaults({ name, prompt: "look" }),
      route: { provider: "p", model: "m" },
      owner: { pid: process.pid, start_time: processStartTime(process.pid) },
      host: { pi_version: "0.73.1", proof: "proven", flags_from: "parse_args", host_flags: [] },
    }),
    schema_version: SCHEMA.manifest,
    seed_sha256: "e".repeat(64),
    seed_bytes: 2,
    artifacts: {},
  });
  return { id: identity.taskId, dir: identity.taskDir };
}

function manifestState(runDir: string): string {
  return (JSON.parse(readFileSync(join(runDir, FUSION_FILES.manifest), "utf8")) as { state: string }).state;
}

describe("no command prints a stack trace", () => {
  it("result --out into a directory that cannot be written: status 2 and a usage line, before the id is looked up", async () => {
    const cwd = await project();
    // /proc exists and is a directory, but nobody (not even root) can create a file in it.
    const ran = await cli(cwd, ["result", "dnope", "--out", "/proc/answer.md"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^pi-bg-delegate: --out: \/proc is not writable/);
    expect(ran.stderr).toContain("See: pi-bg-delegate result --help");
    expect(ran.stderr).not.toContain("task_unknown");
    expect(ran.stderr).not.toMatch(STACK);
    const missing = await cli(cwd, ["result", "dnope", "--out", join(cwd, "no-such-dir", "a.md")]);
    expect(missing.code).toBe(2);
  });

  it("a write of --out that still fails after the check is a typed failure (status 1, [code] line)", async () => {
    const cwd = await project();
    const run = buildCompletedRun(cwd);
    // The directory is writable, but the atomic write's temporary name is longer than a name may be.
    const ran = await cli(cwd, ["result", run.runId, "--out", join(cwd, "a".repeat(250))]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^\[artifact_error\] could not write --out /);
    expect(ran.stderr).toContain("Remediation: Check that the --out directory is writable");
    expect(ran.stderr).not.toMatch(STACK);
    expect(ran.stdout).toBe("");
  });

  it("an unexpected error (here: stdout fails) is a typed one-line failure with status 1", async () => {
    const cwd = await project();
    const failing = () => {
      throw Object.assign(new Error("write EIO"), { code: "EIO" });
    };
    const ran = await cli(cwd, ["list"], { stdout: failing });
    expect(ran.code).toBe(1);
    expect(ran.stderr.split("\n")[0]).toBe("[artifact_error] pi-bg-delegate list: write EIO");
    expect(ran.stderr).not.toMatch(STACK);
  });
});

describe("ids and options", () => {
  it("trims the id as bg_result does", async () => {
    const cwd = await project();
    const run = buildCompletedRun(cwd);
    const ran = await cli(cwd, ["show", ` ${run.runId.slice(0, 10)} `]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`run:`);
  });

  it("names unknown tasks with the command's own list, not /delegates", async () => {
    const cwd = await project();
    const ran = await cli(cwd, ["show", "dnope"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^\[task_unknown\] /);
    expect(ran.stderr).toContain("Remediation: Check the task id (`pi-bg-delegate list` shows them).");
    expect(ran.stderr).not.toContain("/delegates");
  });
});

describe("cancel", () => {
  it("a stale task (recorded as running, its owner gone): refused, saying so, not 'not running (running)'", async () => {
    const cwd = await project();
    const task = staleDelegate(cwd);
    const ran = await cli(cwd, ["cancel", task.id]);
    expect(ran.code).toBe(4);
    expect(ran.stderr).not.toContain("(running)");
    expect(ran.stderr).toBe(
      `${task.id} is not running (recorded as running, but its owner and child are gone); nothing was changed.\n`,
    );
  });
});

describe("show and verify on a result that fails its checks", () => {
  it("show says the verification failure and exits 1", async () => {
    const cwd = await project();
    const run = buildCompletedRun(cwd);
    const merged = join(run.runDir, FUSION_FILES.merged);
    const bytes = readFileSync(merged);
    bytes[0] = bytes[0] === 0x23 ? 0x24 : 0x23;
    writeFileSync(merged, bytes);
    const ran = await cli(cwd, ["show", run.runId]);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toMatch(/^state:\s+completed, but it fails verification now: \[answer_hash_mismatch\]/m);
    expect(ran.stderr).toMatch(/^\[answer_hash_mismatch\] /);
    const json = await cli(cwd, ["show", run.runId, "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ state: "completed", failure: { code: "answer_hash_mismatch" } });
  });

  it("verify --json: step strings name paths relative to the project; one label for the completed-run checks", async () => {
    const cwd = await project();
    const good = buildCompletedRun(cwd);
    const bad = buildCompletedRun(cwd);
    writeFileSync(join(bad.runDir, FUSION_FILES.merged), "changed\n");
    const ok = JSON.parse((await cli(cwd, ["verify", good.runId, "--json"])).stdout) as {
      steps: { step: string; ok: boolean }[];
    };
    const failed = JSON.parse((await cli(cwd, ["verify", bad.runId, "--json"])).stdout) as {
      steps: { step: string; ok: boolean }[];
    };
    for (const { step } of [...ok.steps, ...failed.steps]) expect(step).not.toContain(cwd);
    expect(ok.steps[0]?.step).toBe(`run found: .pi/fusion/${good.runId}`);
    const okLast = ok.steps.at(-1)!;
    const failedLast = failed.steps.at(-1)!;
    expect(okLast.ok).toBe(true);
    expect(failedLast.ok).toBe(false);
    expect(failedLast.step).toBe(okLast.step);
  });
});

describe("a Fusion failure view is printed whole", () => {
  it("result and verify: every attempt row, one Remediation line, the [code] first", async () => {
    const cwd = await project();
    const message = `The evaluator's provider failed: ${"overloaded; ".repeat(80)}`;
    const run = buildFailedRun(cwd, "failed", failureInput({ message }));
    for (const argv of [
      ["result", run.runId],
      ["verify", run.runId],
    ]) {
      const ran = await cli(cwd, argv);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toMatch(/^\[child_provider_error\] Fusion run /);
      expect(ran.stderr).not.toContain("more bytes cut");
      expect(ran.stderr.match(/^Remediation:/gm)).toHaveLength(1);
      for (const slot of ["candidate-1", "candidate-2", "candidate-3", "evaluator"])
        expect(ran.stderr).toContain(`/${slot} #1:`);
      expect(ran.stderr).toContain(message.trimEnd());
    }
  });
});

describe("what a task tree says is printed visibly, never as live terminal codes", () => {
  it("list, prune and show escape control characters in ids and names", async () => {
    const cwd = await project();
    const evil = "d\u001b]0;owned\u0007\u001b[2J";
    mkdirSync(join(cwd, ".pi", "delegate", "s", evil), { recursive: true });
    const list = await cli(cwd, ["list", "--all"]);
    expect(list.stdout).toContain("d\\x1b]0;owned\\x07\\x1b[2J");
    expect(list.stdout).not.toContain("\u001b");
    const prune = await cli(cwd, ["prune", "--older-than", "0", "--dry-run"]);
    expect(prune.stdout).toContain("Kept d\\x1b]0;owned\\x07\\x1b[2J: its manifest cannot be read.");
    expect(prune.stdout).not.toContain("\u001b");
    const json = await cli(cwd, ["list", "--all", "--json"]);
    expect(json.stdout).not.toContain("\u001b");
    expect((JSON.parse(json.stdout) as { tasks: { id: string }[] }).tasks[0]?.id).toBe(evil);
    const task = staleDelegate(cwd, "name with \u009b31m C1 CSI");
    const shown = await cli(cwd, ["show", task.id]);
    expect(shown.stdout).toContain("name with \\x9b31m C1 CSI");
    expect(shown.stdout).not.toContain("\u009b");
  });
});

describe('a group\'s members (docs/cli.md, "list" and "show")', () => {
  it("list shows each member's group (--json: group {id, name}, null for work of its own); show prints its group line", async () => {
    const cwd = await project();
    const task = writeCompletedTask(cwd, { name: "token path", session: "grouped-session" });
    const group = groupFor("grouped-session", "認証監査🔐チーム")!;
    writeManifest(task.taskDir, { ...task.manifest, group }); // signed, as launch writes a member's
    const alone = writeCompletedTask(cwd, { name: "quick look", session: "grouped-session" });
    const run = startRun(cwd);
    const runGroup = groupFor("session", "auth-audit")!;
    writeRunRecord(run, { name: "cache question", group: runGroup });
    writeCandidates(run);
    run.commitCancelled({ summary: failureInput({ code: "child_cancelled" }) });

    const text = (await cli(cwd, ["list"])).stdout.split("\n");
    expect(text[0]).toMatch(/\bGROUP\s+NAME$/);
    expect(text.find((l) => l.startsWith(task.manifest.task_id))).toMatch(/ 認証監査🔐チーム {2}token path$/);
    expect(text.find((l) => l.startsWith(alone.manifest.task_id))).toMatch(/ - {2,}quick look$/);
    expect(text.find((l) => l.startsWith(run.runId))).toMatch(/ auth-audit {2,}cache question$/);

    const json = JSON.parse((await cli(cwd, ["list", "--json"])).stdout) as {
      tasks: { id: string; group: unknown }[];
    };
    const groupOf = (id: string) => json.tasks.find((t) => t.id === id)?.group;
    expect(groupOf(task.manifest.task_id)).toEqual(group);
    expect(groupOf(alone.manifest.task_id)).toBeNull();
    expect(groupOf(run.runId)).toEqual(runGroup);

    const shown = await cli(cwd, ["show", task.manifest.task_id]);
    expect(shown.stdout).toMatch(new RegExp(`^group:\\s+認証監査🔐チーム \\(${group.id}\\)$`, "m"));
    expect(JSON.parse((await cli(cwd, ["show", task.manifest.task_id, "--json"])).stdout).group).toEqual(group);
    expect((await cli(cwd, ["show", alone.manifest.task_id])).stdout).not.toMatch(/^group:/m);
    expect((await cli(cwd, ["show", run.runId])).stdout).toMatch(
      new RegExp(`^workflow:.*\\ngroup:\\s+auth-audit \\(${runGroup.id}\\)$`, "m"),
    );
    expect(JSON.parse((await cli(cwd, ["show", run.runId, "--json"])).stdout).group).toEqual(runGroup);

    // A group's id names its members: the command line reads one task at a time.
    const asked = await cli(cwd, ["result", group.id.slice(0, 12)]);
    expect(asked.code).not.toBe(0);
    expect(asked.stderr).toMatch(/^\[task_unknown\] /);
    expect(asked.stderr).toContain(
      `is group "認証監査🔐チーム" (${group.id}), not a task: give one member's id — ${task.manifest.task_id} (token path, completed)`,
    );
    expect(asked.stderr).not.toContain(alone.manifest.task_id);
    // An id that is no group stays the plain unknown id.
    const unknown = (await cli(cwd, ["result", "g0000000000"])).stderr;
    expect(unknown).toMatch(/^\[task_unknown\] /);
    expect(unknown).not.toContain("is group");
  });
});

describe("a Fusion run whose owning Pi died", () => {
  it("list adjudicates it (cancelled, child_cancelled), show says so, and prune --undelivered removes it", async () => {
    const cwd = await project();
    const run = buildStrandedRun(cwd, 4);
    const list = JSON.parse((await cli(cwd, ["list", "--json"])).stdout) as {
      tasks: { id: string; state: string; code: string | null }[];
    };
    expect(list.tasks).toEqual([
      expect.objectContaining({ id: run.runId, state: "cancelled", code: "child_cancelled" }),
    ]);
    expect(manifestState(run.runDir)).toBe("cancelled");
    const shown = await cli(cwd, ["show", run.runId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^failure:\s+\[child_cancelled\]/m);
    const kept = await cli(cwd, ["prune", "--older-than", "0"]);
    // Kept for its notice (the reason's words are pinned in test/unit/fusion-stranded.test.ts); --undelivered removes it.
    expect(kept.stdout).toContain(`Kept ${run.runId}: `);
    expect(existsSync(run.runDir)).toBe(true);
    const pruned = await cli(cwd, ["prune", "--older-than", "0", "--undelivered"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain("Removed 1 task tree");
    expect(existsSync(run.runDir)).toBe(false);
  });

  it("show and prune adjudicate it too, without list first", async () => {
    const cwd = await project();
    const shownRun = buildStrandedRun(cwd, 2);
    const shown = await cli(cwd, ["show", shownRun.runId, "--json"]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ state: "cancelled", failure: { code: "child_cancelled" } });
    const prunedRun = buildStrandedRun(cwd, 2);
    const pruned = await cli(cwd, ["prune", "--older-than", "0", "--undelivered", "--json"]);
    const doc = JSON.parse(pruned.stdout) as { removed: { id: string; state: string }[] };
    expect(doc.removed.map((r) => [r.id, r.state]).sort()).toEqual(
      [
        [shownRun.runId, "cancelled"],
        [prunedRun.runId, "cancelled"],
      ].sort(),
    );
  });
});

describe('which project a command reads (docs/cli.md, "Which project")', () => {
  it("reads the project above a subdirectory, as git finds its root; --out is relative to where it runs", async () => {
    const cwd = await project();
    const task = writeCompletedTask(cwd, { name: "found from below" });
    const sub = join(cwd, "src", "deep");
    mkdirSync(sub, { recursive: true });
    const listed = await cli(sub, ["list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("found from below");
    const written = await cli(sub, ["result", task.manifest.task_id, "--out", "answer.txt"]);
    expect(written.code, written.stderr).toBe(0);
    expect(readFileSync(join(sub, "answer.txt"), "utf8")).toBe(task.answer);
    expect(existsSync(join(cwd, "answer.txt"))).toBe(false);
  });

  it("says where it looked when neither the directory nor any above it holds a store", async () => {
    const empty = await makeTempDir("cli-main-no-project", "each");
    const listed = await cli(empty, ["list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(`No tasks: no .pi/delegate or .pi/fusion in ${empty} or any directory above it.\n`);
  });
});
