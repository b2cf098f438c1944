/**
 * The store's records prove they are this user's for this project (src/store/record-mac.ts): a MAC
 * under the per-user key over the purpose, the fields and the project's real path.
 */
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRealPath, recordMacValid, signRecord } from "../../src/store/record-mac.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

function setup() {
  const root = makeTempDirSync("record-mac", "each");
  const cwd = join(root, "project");
  const other = join(root, "other");
  mkdirSync(cwd);
  mkdirSync(other);
  return { cwd, other, root, agentDir: makeTempDirSync("record-mac-agent", "each") };
}

describe("record MACs", () => {
  it("accepts this user's MAC of the same record for the same project", () => {
    const { cwd, agentDir } = setup();
    const mac = signRecord(agentDir, cwd, "task-manifest", { id: "d1", state: "running" });
    expect(recordMacValid(agentDir, cwd, "task-manifest", { state: "running", id: "d1" }, mac)).toBe(true);
  });

  it("refuses another record, purpose, project or user key, and anything that is not a MAC", () => {
    const { cwd, other, agentDir } = setup();
    const mac = signRecord(agentDir, cwd, "task-manifest", { id: "d1" });
    expect(recordMacValid(agentDir, cwd, "task-manifest", { id: "d2" }, mac)).toBe(false);
    expect(recordMacValid(agentDir, cwd, "launch-lock", { id: "d1" }, mac)).toBe(false);
    expect(recordMacValid(agentDir, other, "task-manifest", { id: "d1" }, mac)).toBe(false);
    const otherUser = makeTempDirSync("record-mac-agent2", "each");
    signRecord(otherUser, cwd, "task-manifest", {});
    expect(recordMacValid(otherUser, cwd, "task-manifest", { id: "d1" }, mac)).toBe(false);
    for (const bad of [undefined, 1, "", "zz".repeat(32), mac.slice(2), mac.toUpperCase()]) {
      expect(recordMacValid(agentDir, cwd, "task-manifest", { id: "d1" }, bad)).toBe(false);
    }
  });

  it("refuses every MAC while the user has no key yet", () => {
    const { cwd } = setup();
    const fresh = makeTempDirSync("record-mac-nokey", "each");
    expect(recordMacValid(fresh, cwd, "task-manifest", {}, "0".repeat(64))).toBe(false);
  });

  it("binds the project's real path: a link to the project signs the same project", () => {
    const { cwd, root, agentDir } = setup();
    const link = join(root, "link");
    symlinkSync(cwd, link);
    expect(projectRealPath(link)).toBe(projectRealPath(cwd));
    const mac = signRecord(agentDir, link, "answer-read", { id: "d1" });
    expect(recordMacValid(agentDir, cwd, "answer-read", { id: "d1" }, mac)).toBe(true);
  });
});
