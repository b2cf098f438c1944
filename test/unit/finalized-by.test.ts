/**
 * Which limit told a delegate to answer is recorded in its manifest when the parent adjudicates it
 * (terminal.finalized_by, from the verified result.json), so the completion notice can say so without
 * reading the child's files again (docs/subsystems/retrieval.md, "The completion notice"). The key is
 * optional in the closed manifest schema (trees adjudicated before it have none) and must be one of
 * the limits when present.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { readManifest } from "../../src/store/lookup.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

function rewriteTerminal(taskDir: string, change: (terminal: Record<string, unknown>) => void): void {
  const path = join(taskDir, TASK_FILES.manifest);
  const manifest = JSON.parse(readFileSync(path, "utf8"));
  change(manifest.terminal);
  writeFileSync(path, `${JSON.stringify(manifest)}\n`);
}

describe("terminal.finalized_by", () => {
  it("is recorded from the verified result when a limit's runway told the child to answer", () => {
    const cwd = makeTempDirSync("finalized-by", "each");
    const task = writeCompletedTask(cwd, { result: { finalized_by_runway: true, finalized_by: "cost" } });
    expect(task.manifest.terminal?.finalized_by).toBe("cost");
    expect(readManifest(task.taskDir).terminal?.finalized_by).toBe("cost");
  });

  it("is absent when no limit did, and a manifest without it (an older tree) reads as before", () => {
    const cwd = makeTempDirSync("finalized-by", "each");
    const task = writeCompletedTask(cwd);
    expect(task.manifest.terminal).not.toHaveProperty("finalized_by");
    expect(readManifest(task.taskDir).terminal).not.toHaveProperty("finalized_by");
  });

  it("a value that is not one of the limits makes the manifest result_unavailable", () => {
    const cwd = makeTempDirSync("finalized-by", "each");
    const task = writeCompletedTask(cwd, { result: { finalized_by_runway: true, finalized_by: "turns" } });
    rewriteTerminal(task.taskDir, (terminal) => {
      terminal.finalized_by = "money";
    });
    let error: unknown;
    try {
      readManifest(task.taskDir);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DelegateError);
    expect((error as DelegateError).code).toBe("result_unavailable");
    expect((error as DelegateError).message).toContain("terminal.finalized_by");
  });
});
