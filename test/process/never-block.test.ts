/**
 * No read of a task-tree file or of an evidence file can block (issue #27, finding 2): a FIFO, a
 * device, a directory or a symbolic link where a file should be is refused by its type before any
 * read (src/core/fs.ts, readRegularFile), and each reader turns that into its typed failure, or
 * "unchecked", within 2 s (docs/subsystems/retrieval.md, "Reading a task tree"). A reader that would
 * block is released after 3 s by the FIFO helper, so a regression fails on time instead of hanging.
 */
import { copyFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { specialPathRefusal } from "../../src/child/tool-hooks.ts";
import { taskFacts } from "../../src/cli/show.ts";
import type { DelegateFacts } from "../../src/cli/show-facts.ts";
import { FUSION_FILES, TASK_FILES } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { openRegularFile, readRegularFile } from "../../src/core/fs.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { EvidenceRow } from "../../src/core/types.ts";
import { adjudicateFusion, readFusionManifest } from "../../src/fusion/index.ts";
import { adjudicateDelegate, retrieveDelegate } from "../../src/retrieval/retrieve.ts";
import { readManifest, type TaskRef, taskRefAt } from "../../src/store/lookup.ts";
import { readBudgetFigures, readProgress } from "../../src/store/progress.ts";
import { adjudicateTask } from "../../src/tasks/adjudicate-task.ts";
import { fusionLiveness } from "../../src/tasks/running.ts";
import { cancelTask, listRows } from "../../src/tasks/seam.ts";
import { checkFreshness } from "../../src/verify/freshness.ts";
import { runCli } from "../helpers/cli.ts";
import { timed, timedAsync, useFifoReleaser } from "../helpers/fifo.ts";
import { buildCompletedRun } from "../helpers/fusion-fixtures.ts";
import { type CompletedTask, writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const BOUND_MS = 2_000;
const fifos = useFifoReleaser();

function codeOf(error: unknown): string {
  if (error instanceof DelegateError) return error.code;
  throw error ?? new Error("no failure");
}

function refOf(task: CompletedTask): TaskRef {
  return taskRefAt("delegate", task.manifest.task_id, task.taskDir);
}

async function completed(options: Parameters<typeof writeCompletedTask>[1] = {}): Promise<CompletedTask> {
  return writeCompletedTask(await makeTempDir("never-block", "each"), options);
}

const NOTES = "line one\nline two\nline three\n";

/** A read evidence row for lines 1-2 of notes.txt, as the child's guard records it. */
const NOTES_READ: EvidenceRow = {
  tool: "read",
  path: "notes.txt",
  file: "notes.txt",
  offset: 1,
  limit: 2,
  line_start: 1,
  line_end: 2,
  byte_start: 0,
  byte_end: 18,
  sha256: sha256Hex(NOTES.slice(0, 18)),
};

describe("the one reader of a regular file (src/core/fs.ts)", () => {
  it("refuses a FIFO, a directory, a symbolic link and a device by type, at once, and reads a regular file", async () => {
    const dir = await makeTempDir("regular", "each");
    const file = join(dir, "file.txt");
    writeFileSync(file, "bytes\n");
    const fifo = fifos.make(join(dir, "fifo"));
    mkdirSync(join(dir, "dir"));
    symlinkSync(file, join(dir, "link"));
    const cases: [string, unknown][] = [
      [fifo, { ok: false, reason: "not_regular", what: "a FIFO" }],
      [join(dir, "dir"), { ok: false, reason: "not_regular", what: "a directory" }],
      [join(dir, "link"), { ok: false, reason: "not_regular", what: "a symbolic link" }],
      ["/dev/null", { ok: false, reason: "not_regular", what: "a device" }],
      [join(dir, "missing"), { ok: false, reason: "missing" }],
      [join(file, "below-a-file"), { ok: false, reason: "missing" }],
    ];
    for (const [path, expected] of cases) {
      const read = timed(() => readRegularFile(path, 1024));
      expect(read.ms, path).toBeLessThan(BOUND_MS);
      expect(read.value, path).toEqual(expected);
      const opened = timed(() => openRegularFile(path));
      expect(opened.ms, path).toBeLessThan(BOUND_MS);
      expect(opened.value, path).toEqual(expected);
    }
    expect(readRegularFile(file, 1024)).toEqual({ ok: true, bytes: Buffer.from("bytes\n") });
    expect(readRegularFile(file, 3)).toEqual({ ok: false, reason: "too_large", size: 6 });
  });

  it("following links (a child's evidence), reads the file a link names and still refuses a FIFO or device behind one", async () => {
    const dir = await makeTempDir("regular-follow", "each");
    const file = join(dir, "file.txt");
    writeFileSync(file, "bytes\n");
    symlinkSync(file, join(dir, "link"));
    symlinkSync(fifos.make(join(dir, "fifo")), join(dir, "to-fifo"));
    symlinkSync("/dev/zero", join(dir, "to-zero"));
    const follow = { followLinks: true };
    expect(readRegularFile(join(dir, "link"), 1024, follow)).toEqual({ ok: true, bytes: Buffer.from("bytes\n") });
    for (const [name, what] of [
      ["to-fifo", "a FIFO"],
      ["to-zero", "a device"],
    ] as const) {
      const read = timed(() => readRegularFile(join(dir, name), 1024, follow));
      expect(read.ms, name).toBeLessThan(BOUND_MS);
      expect(read.value, name).toEqual({ ok: false, reason: "not_regular", what });
    }
  });
});

describe("the child's refusal of special paths (src/child/tool-hooks.ts)", () => {
  it("refuses read, grep, find and ls on a FIFO or a device, through a link too; leaves files, directories and missing paths to the tool", async () => {
    const dir = await makeTempDir("special-paths", "each");
    writeFileSync(join(dir, "file.txt"), "x\n");
    fifos.make(join(dir, "pipe"));
    symlinkSync("/dev/zero", join(dir, "zero"));
    const refusal = (path: string, what: string) => ({
      block: true,
      reason: `[delegate] ${path} is ${what}, not a regular file or a directory; the delegate does not open it (it could wait for ever or never end).`,
    });
    for (const tool of ["read", "grep", "find", "ls"]) {
      expect(specialPathRefusal(tool, { path: "pipe" }, dir), tool).toEqual(refusal("pipe", "a FIFO"));
      expect(specialPathRefusal(tool, { path: "zero" }, dir), tool).toEqual(refusal("zero", "a device"));
      for (const path of ["file.txt", ".", "missing.txt"])
        expect(specialPathRefusal(tool, { path }, dir)).toBeUndefined();
    }
    // No path: grep, find and ls search the project root, a directory.
    expect(specialPathRefusal("grep", { pattern: "x" }, dir)).toBeUndefined();
    expect(specialPathRefusal("delegate_read_artifact", { path: "pipe" }, dir)).toBeUndefined();
    expect(specialPathRefusal("read", { path: "/dev/null" }, dir)).toEqual(refusal("/dev/null", "a device"));
  });
});

/** A completed task with a FIFO in place of `file`: settling it answers `code` within the bound. */
async function settlesWithFifoAt(file: string, code: string) {
  const task = await completed();
  fifos.make(join(task.taskDir, file));
  const settle = timed(() => adjudicateDelegate(task.taskDir));
  expect(settle.ms).toBeLessThan(BOUND_MS);
  expect(codeOf(settle.error)).toBe(code);
  return task;
}

describe("a FIFO in a delegate task tree", () => {
  it("result.json: bg_result, list and show answer artifact_read_failed within 2 s", async () => {
    const task = await settlesWithFifoAt(TASK_FILES.result, "artifact_read_failed");
    const rows = await timedAsync(() => listRows(task.cwd, { verify: true }));
    expect(rows.ms).toBeLessThan(BOUND_MS);
    expect(rows.value?.[0]?.code).toBe("artifact_read_failed");
    const facts = await timedAsync(() => taskFacts(refOf(task)));
    expect(facts.ms).toBeLessThan(BOUND_MS);
    expect((facts.value as DelegateFacts).failure?.code).toBe("artifact_read_failed");
  });

  it("manifest.json: artifact_read_failed, and an unreadable row in /delegates", async () => {
    const task = await settlesWithFifoAt(TASK_FILES.manifest, "artifact_read_failed");
    const rows = timed(() => listRows(task.cwd, { verify: false }));
    expect(rows.ms).toBeLessThan(BOUND_MS);
    expect(rows.value?.[0]?.state).toBe("unreadable");
  });

  it("seed.json: seed_hash_mismatch when verified, and adjudication (which reads the seed) does not block", async () => {
    await settlesWithFifoAt(TASK_FILES.seed, "seed_hash_mismatch");

    const fresh = await completed({ adjudicate: false });
    fifos.make(join(fresh.taskDir, TASK_FILES.seed));
    const end = timed(() => adjudicateTask(fresh.taskDir, fresh.manifest));
    expect(end.ms).toBeLessThan(BOUND_MS);
    expect(end.value?.manifest.terminal?.code).toBe("seed_hash_mismatch");
  });

  it("child-terminal.json (no result): the task ends artifact_read_failed", async () => {
    const task = await completed({ adjudicate: false });
    rmSync(join(task.taskDir, TASK_FILES.result));
    fifos.make(join(task.taskDir, TASK_FILES.terminal));
    const end = timed(() => adjudicateTask(task.taskDir, task.manifest));
    expect(end.ms).toBeLessThan(BOUND_MS);
    expect(end.value?.manifest.terminal?.code).toBe("artifact_read_failed");
  });

  it("progress.json and budget-plan.json read as nothing known", async () => {
    const task = await completed();
    fifos.make(join(task.taskDir, TASK_FILES.progress));
    fifos.make(join(task.taskDir, TASK_FILES.budgetPlan));
    const progress = timed(() => readProgress(task.taskDir));
    expect(progress.ms).toBeLessThan(BOUND_MS);
    expect(progress.value).toEqual({ turns: 0, tool_calls: 0, cost_total: null });
    const budget = timed(() => readBudgetFigures(task.taskDir));
    expect(budget.ms).toBeLessThan(BOUND_MS);
    expect(budget.value).toBeNull();
    const facts = await timedAsync(() => taskFacts(refOf(task)));
    expect(facts.ms).toBeLessThan(BOUND_MS);
    expect((facts.value as DelegateFacts).answer).not.toBeNull();
  });

  it("answer.txt: show flags it, bg_result's file delivery replaces it with the verified bytes", async () => {
    const task = await completed();
    const copy = fifos.make(join(task.taskDir, TASK_FILES.answer));
    const facts = await timedAsync(() => taskFacts(refOf(task)));
    expect(facts.ms).toBeLessThan(BOUND_MS);
    expect((facts.value as DelegateFacts).answer_copy).toEqual({ path: copy, state: "differs" });
    const delivered = timed(() => retrieveDelegate(task.taskDir, "artifact"));
    expect(delivered.ms).toBeLessThan(BOUND_MS);
    expect(delivered.error).toBeUndefined();
    expect(readRegularFile(copy, 1024)).toEqual({ ok: true, bytes: Buffer.from(task.answer) });
  });

  it("symbolic links are not followed: a result.json or manifest.json linking out of .pi is artifact_read_failed", async () => {
    const task = await completed();
    const outside = join(task.cwd, "outside");
    mkdirSync(outside);
    for (const name of [TASK_FILES.result, TASK_FILES.manifest]) {
      const path = join(task.taskDir, name);
      copyFileSync(path, join(outside, name));
      rmSync(path);
      symlinkSync(join(outside, name), path);
    }
    expect(codeOf(timed(() => readManifest(task.taskDir)).error)).toBe("artifact_read_failed");
    const other = await completed();
    const path = join(other.taskDir, TASK_FILES.result);
    copyFileSync(path, join(outside, "result-copy.json"));
    rmSync(path);
    symlinkSync(join(outside, "result-copy.json"), path);
    expect(codeOf(timed(() => adjudicateDelegate(other.taskDir)).error)).toBe("artifact_read_failed");
  });
});

describe("a FIFO where the child read a project file", () => {
  it("is unchecked evidence, within 2 s, for bg_result and show", async () => {
    const cwd = await makeTempDir("never-block-evidence", "each");
    writeFileSync(join(cwd, "notes.txt"), NOTES);
    const task = writeCompletedTask(cwd, { evidence: [NOTES_READ] });
    expect(checkFreshness([NOTES_READ], cwd).state).toBe("fresh");
    fifos.make(join(cwd, "notes.txt"));
    const fresh = timed(() => checkFreshness([NOTES_READ], cwd));
    expect(fresh.ms).toBeLessThan(BOUND_MS);
    expect(fresh.value?.state).toBe("unchecked");
    const delivered = timed(() => retrieveDelegate(task.taskDir, undefined));
    expect(delivered.ms).toBeLessThan(BOUND_MS);
    expect(delivered.value?.text).toContain(task.answer);
    const facts = await timedAsync(() => taskFacts(refOf(task)));
    expect(facts.ms).toBeLessThan(BOUND_MS);
    expect((facts.value as DelegateFacts).evidence_check?.freshness.state).toBe("unchecked");
  });
});

describe("a FIFO in a Fusion run directory", () => {
  it("manifest.json: artifact_read_failed for retrieval, unreadable in /delegates, cancel refused", async () => {
    const cwd = await makeTempDir("never-block-fusion", "each");
    const { runDir } = buildCompletedRun(cwd);
    fifos.make(join(runDir, FUSION_FILES.manifest));
    const read = await timedAsync(() => readFusionManifest(runDir));
    expect(read.ms).toBeLessThan(BOUND_MS);
    expect(codeOf(read.error)).toBe("artifact_read_failed");
    const settled = await timedAsync(() => adjudicateFusion(runDir, fusionLiveness));
    expect(settled.ms).toBeLessThan(BOUND_MS);
    expect(codeOf(settled.error)).toBe("artifact_read_failed");
    const rows = timed(() => listRows(cwd, { verify: false }));
    expect(rows.ms).toBeLessThan(BOUND_MS);
    expect(rows.value?.[0]?.state).toBe("unreadable");
    const cancel = timed(() => cancelTask(taskRefAt("fusion", "x", runDir)));
    expect(cancel.ms).toBeLessThan(BOUND_MS);
    expect(cancel.value?.kind).toBe("refused");
  });

  it("merged.md: the completed run does not verify, within 2 s", async () => {
    const cwd = await makeTempDir("never-block-fusion", "each");
    const { runDir } = buildCompletedRun(cwd);
    fifos.make(join(runDir, FUSION_FILES.merged));
    const settled = await timedAsync(() => adjudicateFusion(runDir, fusionLiveness));
    expect(settled.ms).toBeLessThan(BOUND_MS);
    expect(codeOf(settled.error)).toBe("artifact_read_failed");
  });
});

describe("the command line on FIFOs", () => {
  it("list with a FIFO at result.json and show with a FIFO where the child read answer within 2 s", async () => {
    const cwd = await makeTempDir("never-block-cli", "each");
    writeFileSync(join(cwd, "notes.txt"), NOTES);
    const listed = writeCompletedTask(cwd, { name: "listed" });
    const shown = writeCompletedTask(cwd, { name: "shown", evidence: [NOTES_READ] });
    fifos.make(join(listed.taskDir, TASK_FILES.result));
    fifos.make(join(cwd, "notes.txt"));
    // The command's own start (Node, jiti) is not the read: the bound is on top of a plain run.
    const baseline = await timedAsync(() => runCli(cwd, "--help"));
    const list = await timedAsync(() => runCli(cwd, "list", "--all"));
    expect(list.ms - baseline.ms).toBeLessThan(BOUND_MS);
    expect(list.value?.stdout).toContain("[artifact_read_failed]");
    const show = await timedAsync(() => runCli(cwd, "show", shown.manifest.task_id));
    expect(show.ms - baseline.ms).toBeLessThan(BOUND_MS);
    expect(show.value?.code).toBe(0);
    expect(show.value?.stdout).toMatch(/Evidence: unchecked/);
  });
});
