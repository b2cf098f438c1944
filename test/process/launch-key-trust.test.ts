/**
 * Which launch-key records may turn a launch into "already started" (src/launch/key-trust.ts;
 * docs/tools/bg_delegate.md, "Never launched twice"), on real trees written by the production
 * builders and real records written by recordKeyedLaunch: only a record signed with this user's key
 * for this project, naming a tree of this project that is this user's, binds the key and passes
 * bg_result's checks. Every other record is ignored with its reason, and a launch that failed before
 * its child started dedupes nothing.
 */
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { TASK_FILES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { LaunchKeyRecord } from "../../src/core/schema/launch-key.ts";
import { recordKey } from "../../src/host/index.ts";
import { keyRecordMac } from "../../src/launch/key-trust.ts";
import { findKeyedLaunch, keyFile, recordKeyedLaunch } from "../../src/launch/launch-keys.ts";
import { readManifest, writeManifest } from "../../src/store/lookup.ts";
import { taskDirFor } from "../../src/store/task-paths.ts";
import {
  candidateAttempts,
  failureInput,
  MERGED,
  startRun,
  USAGE_SO_FAR,
  writeCandidates,
  writeRunRecord,
} from "../helpers/fusion-fixtures.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

const KEY = "audit-auth";

function project(label: string): { cwd: string; agentDir: string } {
  return { cwd: makeTempDirSync(label, "each"), agentDir: makeTempDirSync(`${label}-agent`, "each") };
}

/** A completed task launched with KEY and its record, as a launch writes them. */
function keyedTask(cwd: string, agentDir: string, key = KEY) {
  const task = writeCompletedTask(cwd, { key });
  recordKeyedLaunch(cwd, key, "delegate", task.manifest.task_id, task.taskDir, agentDir);
  return task;
}

function readRecord(cwd: string, key = KEY): LaunchKeyRecord {
  return JSON.parse(readFileSync(keyFile(cwd, key), "utf8")) as LaunchKeyRecord;
}

/** Write a record for `fields` signed with the user's key for `cwd` (what only our own launch does). */
function writeSigned(
  cwd: string,
  agentDir: string,
  fields: Omit<LaunchKeyRecord, "schema_version" | "mac" | "receipt">,
) {
  const mac = keyRecordMac(recordKey(agentDir), cwd, fields);
  const record: LaunchKeyRecord = { schema_version: "pi-bg-delegate.launch-key.v1", ...fields, mac, receipt: null };
  mkdirSync(dirname(keyFile(cwd, KEY)), { recursive: true });
  writeFileSync(keyFile(cwd, KEY), canonicalJsonLine(record), { mode: 0o600 });
}

function ignoredWhy(cwd: string, agentDir: string): string {
  const found = findKeyedLaunch(cwd, KEY, 0, agentDir);
  if (!("ignored" in found)) throw new Error(`expected the record to be ignored, got ${JSON.stringify(found)}`);
  return found.ignored;
}

describe("a delegate's key record", () => {
  it("our own record of a completed task of this project is already started", () => {
    const { cwd, agentDir } = project("key-own");
    const task = keyedTask(cwd, agentDir);
    const found = findKeyedLaunch(cwd, KEY, 0, agentDir);
    expect(found).toMatchObject({
      existing: { dir: task.taskDir, state: "completed", name: "tree test", record: { id: task.manifest.task_id } },
    });
    expect(readManifest(task.taskDir).key_sha256).toBe(sha256Hex(KEY));
  });

  it("no record, or a record whose tree was pruned, finds nothing and says nothing", () => {
    const { cwd, agentDir } = project("key-none");
    expect(findKeyedLaunch(cwd, KEY, 0, agentDir)).toEqual({ none: true });
    const task = keyedTask(cwd, agentDir);
    rmSync(task.taskDir, { recursive: true });
    expect(findKeyedLaunch(cwd, KEY, 0, agentDir)).toEqual({ none: true });
  });

  it("a record written by hand (a shipped repository's) for a tree that looks complete is not trusted", () => {
    const { cwd, agentDir } = project("key-planted");
    // The attacker's tree is a real-looking completed task (even binding the key's hash), its record unsigned.
    const task = writeCompletedTask(cwd, { key: KEY });
    recordKey(agentDir);
    const fields = {
      key_sha256: sha256Hex(KEY),
      kind: "delegate",
      id: task.manifest.task_id,
      dir: relative(cwd, task.taskDir),
      created_at: new Date().toISOString(),
    };
    writeFileSync(
      keyFile(cwd, KEY),
      canonicalJsonLine({
        schema_version: "pi-bg-delegate.launch-key.v1",
        ...fields,
        mac: "0".repeat(64),
        receipt: null,
      }),
      { mode: 0o644 },
    );
    expect(ignoredWhy(cwd, agentDir)).toBe(
      `the record of key "${KEY}" was not trusted: it is not signed with your key for this project (written by hand, shipped or copied); launched anew`,
    );
  });

  it("a record not of the declared shape (another kind, a field of another type, none of a key) is not trusted", () => {
    const { cwd, agentDir } = project("key-shape");
    const task = keyedTask(cwd, agentDir);
    const own = readRecord(cwd);
    for (const bad of [
      { ...own, kind: "workflow" },
      { ...own, id: 7 },
      { ...own, created_at: undefined },
    ]) {
      writeFileSync(keyFile(cwd, KEY), JSON.stringify(bad), { mode: 0o600 });
      expect(ignoredWhy(cwd, agentDir)).toBe(
        `the record of key "${KEY}" was not trusted: the key record is not a launch-key record of this version; launched anew`,
      );
    }
    writeFileSync(keyFile(cwd, KEY), JSON.stringify(own), { mode: 0o600 });
    expect(findKeyedLaunch(cwd, KEY, 0, agentDir)).toMatchObject({ existing: { dir: task.taskDir } });
  });

  it("a record signed under another user's key (another agent dir) is not trusted", () => {
    const { cwd, agentDir } = project("key-other-user");
    keyedTask(cwd, makeTempDirSync("key-their-agent", "each"));
    recordKey(agentDir);
    expect(ignoredWhy(cwd, agentDir)).toMatch(/not signed with your key for this project/);
  });

  it("without a signing key of this user, no record is trusted", () => {
    const { cwd, agentDir } = project("key-no-user-key");
    keyedTask(cwd, makeTempDirSync("key-their-agent", "each"));
    expect(ignoredWhy(cwd, agentDir)).toMatch(/it is not signed with your key \(you have no signing key yet\)/);
  });

  it("a record and tree copied from another project of ours are not trusted here", () => {
    const mine = project("key-copy-a");
    const other = makeTempDirSync("key-copy-b", "each");
    const task = keyedTask(other, mine.agentDir);
    const dest = join(mine.cwd, relative(other, task.taskDir));
    cpSync(task.taskDir, dest, { recursive: true });
    copyFileSync(keyFile(other, KEY), keyFile(mine.cwd, KEY));
    expect(ignoredWhy(mine.cwd, mine.agentDir)).toMatch(/not signed with your key for this project/);
    // Signed for this project, the copied tree still names the other one.
    writeSigned(mine.cwd, mine.agentDir, { ...readRecord(mine.cwd), dir: relative(mine.cwd, dest) });
    expect(ignoredWhy(mine.cwd, mine.agentDir)).toMatch(`its task belongs to another project (${other})`);
  });

  it("a record pointing at a real task of another project is not trusted", () => {
    const { cwd, agentDir } = project("key-outside");
    const other = makeTempDirSync("key-outside-b", "each");
    const task = writeCompletedTask(other, { key: KEY });
    writeSigned(cwd, agentDir, {
      key_sha256: sha256Hex(KEY),
      kind: "delegate",
      id: task.manifest.task_id,
      dir: relative(cwd, task.taskDir),
      created_at: new Date().toISOString(),
    });
    expect(ignoredWhy(cwd, agentDir)).toMatch(/it points outside this project's \.pi\/delegate \(\.\.\//);
  });

  it("a group-writable key record, or a group-writable manifest, is not trusted", () => {
    const { cwd, agentDir } = project("key-writable");
    const task = keyedTask(cwd, agentDir);
    chmodSync(keyFile(cwd, KEY), 0o664);
    expect(ignoredWhy(cwd, agentDir)).toMatch(/: the key record has mode 0664: others than you may change it;/);
    chmodSync(keyFile(cwd, KEY), 0o600);
    chmodSync(join(task.taskDir, TASK_FILES.manifest), 0o620);
    expect(ignoredWhy(cwd, agentDir)).toMatch(/its task's manifest.json has mode 0620: others than you may change it/);
    chmodSync(join(task.taskDir, TASK_FILES.manifest), 0o600);
    expect(findKeyedLaunch(cwd, KEY, 0, agentDir)).toHaveProperty("existing");
  });

  it("a task that was not launched with this key, or whose answer no longer verifies, is not trusted", () => {
    const { cwd, agentDir } = project("key-binding");
    const unkeyed = writeCompletedTask(cwd, {});
    recordKeyedLaunch(cwd, KEY, "delegate", unkeyed.manifest.task_id, unkeyed.taskDir, agentDir);
    expect(ignoredWhy(cwd, agentDir)).toMatch(/its task was not launched with this key/);

    const task = keyedTask(cwd, agentDir);
    const result = join(task.taskDir, TASK_FILES.result);
    const bytes = readFileSync(result);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 1;
    writeFileSync(result, bytes);
    expect(ignoredWhy(cwd, agentDir)).toMatch(/its task's answer does not verify: \[/);
  });

  it("a task whose manifest names another directory is not trusted", () => {
    const { cwd, agentDir } = project("key-moved");
    const task = keyedTask(cwd, agentDir);
    const moved = taskDirFor(cwd, "another-session", task.manifest.task_id);
    mkdirSync(dirname(moved), { recursive: true });
    cpSync(task.taskDir, moved, { recursive: true });
    rmSync(task.taskDir, { recursive: true });
    writeSigned(cwd, agentDir, { ...readRecord(cwd), dir: relative(cwd, moved) });
    expect(ignoredWhy(cwd, agentDir)).toMatch(/its task's manifest does not name the directory it lives in/);
  });

  it("a launch that failed before its child started dedupes nothing: the retry launches anew", () => {
    const { cwd, agentDir } = project("key-spawn-failed");
    const task = keyedTask(cwd, agentDir);
    const now = new Date().toISOString();
    writeManifest(task.taskDir, {
      ...task.manifest,
      state: "failed",
      child: null,
      terminal: { ended_at: now, code: "child_spawn_failed", message: "spawn E2BIG" },
    });
    expect(ignoredWhy(cwd, agentDir)).toBe(
      `the launch with key "${KEY}" (${task.manifest.task_id}) failed before its child started; launched anew`,
    );
  });
});

describe("a Fusion run's key record", () => {
  function keyedRun(cwd: string, agentDir: string, recordFields: object, end: "completed" | "preflight") {
    const run = startRun(cwd);
    writeRunRecord(run, recordFields);
    if (end === "completed") {
      const outputs = writeCandidates(run);
      run.commitCompleted({
        merged: MERGED,
        details: { usage: USAGE_SO_FAR, attempts: candidateAttempts(3, outputs) },
      });
    } else {
      run.commitFailed({
        summary: failureInput({
          stage: "preflight",
          slot: "candidate-1",
          code: "child_spawn_failed",
          childCreated: false,
          attempts: [],
        }),
      });
    }
    mkdirSync(dirname(keyFile(cwd, KEY)), { recursive: true }); // the launch lock makes it in a launch
    recordKeyedLaunch(cwd, KEY, "fusion", run.runId, run.runDir, agentDir);
    return run;
  }

  it("our own keyed run is already started; one whose run.json does not bind the key is not trusted", () => {
    const { cwd, agentDir } = project("key-fusion");
    const run = keyedRun(cwd, agentDir, { key_sha256: sha256Hex(KEY) }, "completed");
    expect(findKeyedLaunch(cwd, KEY, 0, agentDir)).toMatchObject({
      existing: { dir: run.runDir, state: "completed", name: "question" },
    });
    keyedRun(cwd, agentDir, {}, "completed");
    expect(ignoredWhy(cwd, agentDir)).toMatch(/its run was not launched with this key/);
  });

  it("a run that failed at preflight dedupes nothing", () => {
    const { cwd, agentDir } = project("key-fusion-preflight");
    const run = keyedRun(cwd, agentDir, { key_sha256: sha256Hex(KEY) }, "preflight");
    expect(ignoredWhy(cwd, agentDir)).toMatch(`(${run.runId}) failed before its child started`);
  });
});
