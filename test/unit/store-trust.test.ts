/**
 * The pure rules of "the store is yours" (docs/subsystems/launch.md): what a store path must be, that
 * a private root's files are never written through a link, which manifests are this user's, the
 * answer-read mark, the adoption of an earlier version's tree, and prune's rule for foreign trees.
 */
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { markPrivateRoot, writeJsonRecord } from "../../src/core/fs.ts";
import { admitPrevious } from "../../src/launch/follow-up.ts";
import { answerReadValid, signedAnswerRead } from "../../src/store/answer-read.ts";
import { readManifest, readTrustedManifest, taskRefAt } from "../../src/store/lookup.ts";
import { requireStoreTrusted, untrustedWhy } from "../../src/store/store-trust.ts";
import { documentTrust, signManifest, treeTrust } from "../../src/store/tree-trust.ts";
import { decidePrune, type PruneCandidate } from "../../src/tasks/prune-policy.ts";
import { cancelTask } from "../../src/tasks/seam.ts";
import { codeOf } from "../helpers/failures.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const UID = process.getuid?.();

describe("what a store path must be", () => {
  it("a real directory or file of yours, not writable by group or others", async () => {
    const dir = await makeTempDir("store-rule");
    const file = join(dir, "f");
    writeFileSync(file, "x", { mode: 0o600 });
    symlinkSync(file, join(dir, "link"));
    expect(untrustedWhy(lstatSync(dir), "directory", UID)).toBeUndefined();
    expect(untrustedWhy(lstatSync(file), "file", UID)).toBeUndefined();
    expect(untrustedWhy(lstatSync(join(dir, "link")), "file", UID)).toBe("is a symbolic link");
    expect(untrustedWhy(lstatSync(file), "directory", UID)).toBe("is a regular file, not a directory");
    expect(untrustedWhy(lstatSync(dir), "file", UID)).toBe("is a directory, not a regular file");
    expect(untrustedWhy(lstatSync(file), "file", (UID ?? 0) + 1)).toBe(
      `is owned by uid ${UID ?? 0}, not you (uid ${(UID ?? 0) + 1})`,
    );
    chmodSync(file, 0o620);
    expect(untrustedWhy(lstatSync(file), "file", UID)).toBe("is writable by group or others (mode 0620)");
  });

  it("requireStoreTrusted names the first path that is not, and accepts a store that does not exist yet", async () => {
    const cwd = await makeTempDir("store-require");
    expect(codeOf(() => requireStoreTrusted(cwd, ["delegate", "fusion"]))).toBeNull();
    mkdirSync(join(cwd, ".pi", "fusion"), { recursive: true });
    symlinkSync(join(cwd, "nowhere"), join(cwd, ".pi", "fusion", ".gitignore"));
    expect(codeOf(() => requireStoreTrusted(cwd, ["delegate"]))).toBeNull();
    expect(() => requireStoreTrusted(cwd, ["delegate", "fusion"])).toThrow(
      `${join(cwd, ".pi", "fusion", ".gitignore")} is a symbolic link`,
    );
    expect(codeOf(() => requireStoreTrusted(cwd, ["fusion"]))).toBe("store_untrusted");
  });
});

describe("markPrivateRoot", () => {
  it("creates .ignore and .gitignore, and never writes through a link already there (dangling or not)", async () => {
    const root = await makeTempDir("private-root");
    const outside = await makeTempDir("private-root-outside");
    symlinkSync(join(outside, "ignore"), join(root, ".ignore"));
    markPrivateRoot(root);
    expect(existsSync(join(outside, "ignore"))).toBe(false);
    expect(lstatSync(join(root, ".ignore")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe("*\n");
    markPrivateRoot(root); // again: both names exist, nothing changes
    expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe("*\n");
  });
});

describe("which manifests are yours", () => {
  it("signed here: yours; without the MAC, edited, copied to another project or signed by another key: foreign", async () => {
    const cwd = await makeTempDir("trust-doc");
    const task = writeCompletedTask(cwd);
    expect(treeTrust("delegate", task.taskDir)).toEqual({ mine: true });
    const signed = JSON.parse(readFileSync(join(task.taskDir, TASK_FILES.manifest), "utf8")) as Record<string, unknown>;
    const { mac: _mac, ...unsigned } = signed;
    expect(documentTrust("delegate", task.taskDir, unsigned)).toMatchObject({ mine: false, unsigned: true });
    expect(documentTrust("delegate", task.taskDir, { ...signed, name: "edited" })).toMatchObject({
      mine: false,
      why: expect.stringContaining("MAC is not yours"),
    });
    const other = await makeTempDir("trust-doc-other");
    const copy = join(other, ".pi", "delegate", "s", task.manifest.task_id);
    mkdirSync(join(copy, ".."), { recursive: true });
    cpSync(task.taskDir, copy, { recursive: true });
    expect(treeTrust("delegate", copy).mine).toBe(false);
    const otherKey = await makeTempDir("trust-doc-key");
    const foreign = signManifest("delegate", task.taskDir, readManifest(task.taskDir), otherKey);
    expect(documentTrust("delegate", task.taskDir, foreign).mine).toBe(false);
    expect(documentTrust("delegate", task.taskDir, "not an object")).toMatchObject({ mine: false });
  });

  it("an earlier version's tree of this project is adopted (signed in place) once it verifies; not when open to others or of another project", async () => {
    const cwd = await makeTempDir("trust-adopt");
    const unsign = (dir: string, patch: Record<string, unknown> = {}) => {
      const { mac: _mac, ...rest } = JSON.parse(readFileSync(join(dir, TASK_FILES.manifest), "utf8")) as Record<
        string,
        unknown
      >;
      writeJsonRecord(join(dir, TASK_FILES.manifest), { ...rest, ...patch });
    };
    const old = writeCompletedTask(cwd, { name: "old" });
    unsign(old.taskDir);
    expect(readTrustedManifest(old.taskDir).trust).toEqual({ mine: true });
    expect(JSON.parse(readFileSync(join(old.taskDir, TASK_FILES.manifest), "utf8")).mac).toMatch(/^[0-9a-f]{64}$/);

    const elsewhere = writeCompletedTask(cwd, { name: "elsewhere" });
    unsign(elsewhere.taskDir, { cwd: "/somewhere/else" });
    expect(treeTrust("delegate", elsewhere.taskDir)).toMatchObject({ mine: false, unsigned: true });

    const open = writeCompletedTask(cwd, { name: "open" });
    unsign(open.taskDir);
    chmodSync(join(open.taskDir, TASK_FILES.result), 0o644);
    expect(treeTrust("delegate", open.taskDir)).toMatchObject({ mine: false, unsigned: true });

    const forged = writeCompletedTask(cwd, { name: "forged" });
    unsign(forged.taskDir, { terminal: { ...forged.manifest.terminal, answer_sha256: "0".repeat(64) } });
    expect(treeTrust("delegate", forged.taskDir)).toMatchObject({ mine: false, unsigned: true });
  });
});

describe("a foreign tree is never acted on", () => {
  it("neither cancelled nor a follow-up's previous task", async () => {
    const cwd = await makeTempDir("foreign-acts");
    const task = writeCompletedTask(cwd, { name: "shipped" });
    const otherKey = await makeTempDir("foreign-acts-key");
    writeJsonRecord(
      join(task.taskDir, TASK_FILES.manifest),
      signManifest("delegate", task.taskDir, readManifest(task.taskDir), otherKey),
    );
    const cancel = cancelTask(taskRefAt("delegate", task.manifest.task_id, task.taskDir));
    expect(cancel).toEqual({ kind: "refused", running: false, why: expect.stringMatching(/^it is foreign: /) });
    expect(existsSync(join(task.taskDir, "cancel-request.json"))).toBe(false);
    expect(codeOf(() => admitPrevious(cwd, task.manifest.task_id))).toBe("previous_task_foreign");
  });
});

describe("the answer-read mark", () => {
  it("counts only when signed by you for this very tree and id", async () => {
    const cwd = await makeTempDir("answer-read");
    const a = writeCompletedTask(cwd, { name: "a" });
    const b = writeCompletedTask(cwd, { name: "b" });
    const path = (dir: string) => join(dir, TASK_FILES.answerRead);
    expect(answerReadValid(a.taskDir, a.manifest.task_id)).toBe(false);
    writeJsonRecord(path(a.taskDir), signedAnswerRead(a.taskDir, a.manifest.task_id, new Date().toISOString()));
    expect(answerReadValid(a.taskDir, a.manifest.task_id)).toBe(true);
    expect(answerReadValid(a.taskDir, b.manifest.task_id)).toBe(false);
    cpSync(path(a.taskDir), path(b.taskDir));
    expect(answerReadValid(b.taskDir, a.manifest.task_id)).toBe(false); // copied to another tree
    writeFileSync(path(b.taskDir), "{}\n");
    expect(answerReadValid(b.taskDir, b.manifest.task_id)).toBe(false);
  });
});

describe("prune and foreign trees", () => {
  const base = { kind: "delegate" as const, dir: "/x", state: null, createdAt: null, endedAt: null };
  const foreign: PruneCandidate = { ...base, id: "f", status: "foreign", foreignWhy: "no MAC" };
  const ended: PruneCandidate = {
    ...base,
    id: "e",
    status: "ended",
    state: "completed",
    endedAt: "2020-01-01T00:00:00Z",
  };

  it("retention never removes a foreign tree; --foreign removes it whatever the limits", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    // Newest first, then by id: "e" before "f".
    expect(decidePrune([foreign, ended], { olderThanDays: 0 }, now)).toEqual([
      { candidate: ended, remove: true },
      { candidate: foreign, remove: false, reason: "foreign" },
    ]);
    expect(decidePrune([foreign, ended], { foreign: true }, now)).toEqual([
      { candidate: ended, remove: false, reason: "kept" },
      { candidate: foreign, remove: true },
    ]);
  });
});
