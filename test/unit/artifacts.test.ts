import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DelegateError } from "../../src/core/errors.ts";
import { writeNewFile } from "../../src/core/fs.ts";
import type { SeedDocument } from "../../src/core/types.ts";
import { writeTaskTree } from "../../src/store/artifacts.ts";
import { taskDirFor } from "../../src/store/task-paths.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-bgd-artifacts-"));
  dirs.push(dir);
  return dir;
}

// A seed that cannot be serialized (a BigInt): the failure happens after the directories exist.
const unserializable = {
  child_session_id: "delegate-x",
  created_at: "t",
  cwd: "/",
  projection: 1n,
} as unknown as SeedDocument;

function attempt(cwd: string, session: string): unknown {
  try {
    writeTaskTree({
      taskDir: taskDirFor(cwd, session, `d${"0".repeat(32)}`),
      seed: unserializable,
      childPrompt: "p",
      ledger: {},
      budgetPlan: {},
      manifest: {} as never,
    });
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("writeTaskTree on failure", () => {
  it("is artifact_error and leaves no directory it created, up to .pi itself", () => {
    const cwd = project();
    const error = attempt(cwd, "s1");
    expect(error).toBeInstanceOf(DelegateError);
    expect((error as DelegateError).code).toBe("artifact_error");
    expect(existsSync(join(cwd, ".pi"))).toBe(false);
  });

  it("never removes what was already there: other tasks and the user's .pi files stay", () => {
    const cwd = project();
    const other = join(cwd, ".pi/delegate/s1/d-other");
    mkdirSync(other, { recursive: true });
    writeFileSync(join(cwd, ".pi/settings.json"), "{}");
    expect((attempt(cwd, "s1") as DelegateError).code).toBe("artifact_error");
    expect((attempt(cwd, "s2") as DelegateError).code).toBe("artifact_error");
    expect(readdirSync(join(cwd, ".pi/delegate"))).toEqual(["s1"]);
    expect(readdirSync(join(cwd, ".pi/delegate/s1"))).toEqual(["d-other"]);
    expect(existsSync(join(cwd, ".pi/settings.json"))).toBe(true);
  });
});

describe("writeNewFile (the task tree's files before the manifest commits them)", () => {
  it("creates the file with exactly the bytes, mode 0600, and never replaces an existing one", () => {
    const dir = project();
    const path = join(dir, "seed.json");
    writeNewFile(path, Buffer.from("first\n"));
    expect(readFileSync(path, "utf8")).toBe("first\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(() => writeNewFile(path, Buffer.from("second\n"))).toThrow(/EEXIST/);
    expect(readFileSync(path, "utf8")).toBe("first\n");
    expect(readdirSync(dir)).toEqual(["seed.json"]);
  });
});
