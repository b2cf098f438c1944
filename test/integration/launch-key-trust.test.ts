/**
 * A launch key's record is believed only when it is provably yours (docs/tools/bg_delegate.md,
 * "Never launched twice"; src/launch/key-trust.ts), through a real SDK parent and real children on
 * the scripted model server: a record a cloned project ships with a made-up completed task, one
 * pointing at a real task of another project, and a group-writable one each let the launch go ahead,
 * the receipt's details saying why; the genuine record then dedupes again. A keyed launch whose spawn
 * failed does not hold its key: the retry launches.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { TASK_FILES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { isChildRequest } from "../helpers/drive.ts";
import { withFreshParent } from "../helpers/held-project.ts";
import {
  findProcesses,
  makeTempDir,
  type SdkParent,
  useServerAndAgentDir,
  withSdkParent,
} from "../helpers/pi-parent.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import {
  calls,
  delegateCall,
  parentModel,
  readJson,
  resultOf,
  taskDirs,
  withUnspawnableEnv,
} from "./launch-support.ts";

const { server, agent } = useServerAndAgentDir();
const KEY = "audit-auth";

afterAll(async () => {
  expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

/** Each user message "<word>" launches a keyed delegate with call id "c_<word>" and directive "<WORD>-WORK". */
function keyedLaunches(): void {
  server.setHandler(
    parentModel({
      onUser: (text) =>
        /^[a-z]+$/.test(text)
          ? calls(
              delegateCall(`c_${text}`, {
                name: text,
                prompt: `${text.toUpperCase()}-WORK`,
                key: KEY,
                notifyOnCompletion: false,
              }),
            )
          : { text: "ok" },
    }),
  );
}

function keyFile(cwd: string): string {
  return join(cwd, ".pi", "delegate", `key-${sha256Hex(KEY)}.json`);
}

interface Launch {
  kind: string;
  task_id: string;
  artifact_dir: string;
  key_record_ignored?: string | null;
}

/** Send `word`; the launch's details (a receipt or "already started"), which must not be an error. */
async function launch(parent: SdkParent, word: string): Promise<Launch> {
  await parent.prompt(word);
  const result = resultOf(parent.messages(), `c_${word}`);
  expect(result.isError, result.text).toBe(false);
  return result.details as unknown as Launch;
}

async function completed(taskDir: string): Promise<void> {
  await expect.poll(() => readJson(join(taskDir, TASK_FILES.manifest)).state, { timeout: 60_000 }).toBe("completed");
}

function childAsked(directive: string): boolean {
  return server.requests.filter(isChildRequest).some((r) => r.messages.some((m) => m.text.includes(directive)));
}

describe("a key record that is not yours does not stop your launch", () => {
  it("a shipped record with a made-up completed task: the launch runs, its details say why; the new record then dedupes", async () => {
    const cwd = await makeTempDir("key-shipped");
    // What a cloned repository can ship: a task tree that passes as completed (it even binds the key's
    // hash and names this very path) and an unsigned key record pointing at it.
    const fake = writeCompletedTask(cwd, { key: KEY, session: "shipped-session", name: "shipped" });
    const plant = () =>
      writeFileSync(
        keyFile(cwd),
        canonicalJsonLine({
          schema_version: "pi-bg-delegate.launch-key.v1",
          key_sha256: sha256Hex(KEY),
          kind: "delegate",
          id: fake.manifest.task_id,
          dir: relative(cwd, fake.taskDir),
          created_at: new Date().toISOString(),
          mac: "0".repeat(64),
          receipt: null,
        }),
        { mode: 0o644 },
      );
    plant();
    // The launch signs its launch lock before it reads the key record (docs/subsystems/launch.md), so your
    // signing key exists by then even in a fresh agent dir.
    const unsigned = "it is not signed with your key for this project (written by hand, shipped or copied)";
    keyedLaunches();
    await withSdkParent({ agentDir: agent, cwd }, async (parent) => {
      const first = await launch(parent, "first");
      expect(first.kind).toBe("bg_delegate_receipt");
      expect(first.task_id).not.toBe(fake.manifest.task_id);
      expect(first.key_record_ignored).toBe(`the record of key "${KEY}" was not trusted: ${unsigned}; launched anew`);
      expect(taskDirs(cwd)).toHaveLength(2);
      await completed(first.artifact_dir);
      expect(childAsked("FIRST-WORK")).toBe(true);

      const again = await launch(parent, "again");
      expect(again).toMatchObject({ kind: "bg_launch_already_started", task_id: first.task_id });
      expect(taskDirs(cwd)).toHaveLength(2);
      expect(childAsked("AGAIN-WORK")).toBe(false);

      // Planted again, now that you have a signing key: still not yours.
      plant();
      const third = await launch(parent, "third");
      expect(third.kind).toBe("bg_delegate_receipt");
      expect(third.key_record_ignored).toBe(
        `the record of key "${KEY}" was not trusted: it is not signed with your key for this project (written by hand, shipped or copied); launched anew`,
      );
      await completed(third.artifact_dir);
      expect(childAsked("THIRD-WORK")).toBe(true);
    });
  });

  it("a record pointing at a real task of another project: the launch runs here", async () => {
    const other = await makeTempDir("key-other-project");
    const cwd = await makeTempDir("key-this-project");
    keyedLaunches();
    const theirs = await withSdkParent({ agentDir: agent, cwd: other }, async (there) => {
      const launched = await launch(there, "there");
      await completed(launched.artifact_dir);
      return launched;
    });
    // Their genuine record, planted here with its directory pointing at their task.
    const record = readJson(keyFile(other));
    mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true });
    writeFileSync(keyFile(cwd), canonicalJsonLine({ ...record, dir: relative(cwd, theirs.artifact_dir) }));

    await withSdkParent({ agentDir: agent, cwd }, async (parent) => {
      const here = await launch(parent, "here");
      expect(here.kind).toBe("bg_delegate_receipt");
      expect(here.key_record_ignored).toMatch(/^the record of key "audit-auth" was not trusted: it is not signed/);
      expect(taskDirs(cwd)).toEqual([here.artifact_dir]);
      await completed(here.artifact_dir);
      expect(childAsked("HERE-WORK")).toBe(true);
    });
  });

  it("a group-writable record is not trusted; our own record, readable only by us, dedupes", async () => {
    keyedLaunches();
    await withFreshParent(agent, "key-writable", async (parent, cwd) => {
      const first = await launch(parent, "first");
      expect(first).toMatchObject({ kind: "bg_delegate_receipt", key_record_ignored: null });
      await completed(first.artifact_dir);
      const again = await launch(parent, "again");
      expect(again).toMatchObject({ kind: "bg_launch_already_started", task_id: first.task_id, state: "completed" });

      chmodSync(keyFile(cwd), 0o664);
      const third = await launch(parent, "third");
      expect(third.kind).toBe("bg_delegate_receipt");
      expect(third.key_record_ignored).toBe(
        `the record of key "${KEY}" was not trusted: the key record has mode 0664: others than you may change it; launched anew`,
      );
      expect(taskDirs(cwd)).toHaveLength(2);
      await completed(third.artifact_dir);
      expect(childAsked("THIRD-WORK")).toBe(true);
      expect(readJson(keyFile(cwd))).toMatchObject({ id: third.task_id });
    });
  });
});

describe("a keyed launch whose spawn failed does not hold its key", () => {
  it("child_spawn_failed with a key, then the same key again: the retry launches and its child runs", async () => {
    keyedLaunches();
    await withFreshParent(agent, "key-spawn-failed", async (parent, cwd) => {
      await withUnspawnableEnv(() => parent.prompt("failing"));
      const failed = resultOf(parent.messages(), "c_failing");
      expect(failed.isError).toBe(true);
      expect(failed.text.split("\n")[0]).toMatch(/^\[child_spawn_failed\] /);
      const [failedDir] = taskDirs(cwd);
      if (failedDir === undefined) throw new Error("the failed launch kept no task dir");
      expect(readJson(join(failedDir, TASK_FILES.manifest))).toMatchObject({ state: "failed", child: null });
      expect(readJson(keyFile(cwd))).toMatchObject({ dir: relative(cwd, failedDir) });

      const retry = await launch(parent, "retry");
      expect(retry.kind).toBe("bg_delegate_receipt");
      expect(retry.key_record_ignored).toBe(
        `the launch with key "${KEY}" (${readJson(join(failedDir, TASK_FILES.manifest)).task_id}) failed before its child started; launched anew`,
      );
      await completed(retry.artifact_dir);
      expect(childAsked("RETRY-WORK")).toBe(true);
      expect(readFileSync(join(retry.artifact_dir, TASK_FILES.manifest), "utf8")).toContain(sha256Hex(KEY));

      // The retry's record stands for work that ran: the same key now returns it.
      const after = await launch(parent, "after");
      expect(after).toMatchObject({ kind: "bg_launch_already_started", task_id: retry.task_id, state: "completed" });
    });
  });
});
