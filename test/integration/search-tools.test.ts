/**
 * A child's grep and find work offline with no rg and no fd on PATH (docs/subsystems/launch.md,
 * "Search tools"): grep runs the rg bundled from @vscode/ripgrep (its directory is last on the child's
 * PATH), find is Pi's find tool served by the guard over `rg --files`; the user's own rg wins when
 * there is one; the ready record says which binaries served them. And nothing under .pi/ reaches git.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledRgPath } from "../../src/core/search-tools.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import { decodeAnswer, runChildTask } from "../helpers/child-task.ts";
import { script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { pathWithout } from "../helpers/search-path.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const server = useModelServer({ resetBetweenTests: false });
let agent: AgentDir;
let cwd: string;

const SEARCH = script(
  { tool: "grep", args: { pattern: "NEEDLE-\\d+" } },
  { tool: "find", args: { pattern: "*.md" } },
  { text: "find said: {{lastToolResult}}" },
);

beforeAll(async () => {
  agent = await createAgentDir({ serverUrl: server.url });
  cwd = await makeTempDir("search-tools");
  await mkdir(join(cwd, "docs", "deep"), { recursive: true });
  await writeFile(join(cwd, "src.txt"), "alpha\nNEEDLE-7 is here\n");
  await writeFile(join(cwd, "docs", "guide.md"), "# guide\n");
  await writeFile(join(cwd, "docs", "deep", "notes.md"), "notes\n");
  await writeFile(join(cwd, "ignored.md"), "ignored\n");
  await writeFile(join(cwd, ".ignore"), "ignored.md\n");
});

afterAll(async () => {
  expect(await waitForNoProcesses(cwd, { includeEnv: true })).toEqual([]);
});

describe("no rg, no fd on PATH", () => {
  it("grep runs the bundled rg, find is served by the guard over rg --files, both recorded", async () => {
    const bundled = bundledRgPath();
    expect(bundled).toBeDefined();
    const run = await runChildTask({
      agentDir: agent.dir,
      cwd,
      prompt: `Search. ${SEARCH}`,
      env: { PATH: pathWithout(["rg", "fd", "fdfind"]) },
    });
    expect(run.files.terminal, run.output).toBeUndefined();
    expect(run.files.ready?.search_tools).toEqual({
      rg: { path: bundled, source: "bundled" },
      find: { served_by: "guard_rg_files", rg: { path: bundled, source: "bundled" } },
    });
    const toolTexts = server.requests.flatMap((r) => r.messages.filter((m) => m.role === "tool").map((m) => m.text));
    expect(toolTexts.some((t) => t.includes("src.txt:2: NEEDLE-7 is here"))).toBe(true);
    const answer = decodeAnswer(run.files.result!);
    const found = answer.replace("find said: ", "").split("\n").filter(Boolean).sort();
    // Relative to the project, ignore files honoured (.ignore drops ignored.md; .pi/ ignores itself).
    expect(found).toEqual(["docs/deep/notes.md", "docs/guide.md"]);
  });

  it("the user's own rg on PATH is the one used", async () => {
    const bin = await makeTempDir("user-bin");
    copyFileSync(bundledRgPath()!, join(bin, "rg"));
    chmodSync(join(bin, "rg"), 0o755);
    server.reset();
    const run = await runChildTask({
      agentDir: agent.dir,
      cwd,
      prompt: `Search again. ${SEARCH}`,
      env: { PATH: [bin, pathWithout(["rg", "fd", "fdfind"])].join(delimiter) },
    });
    expect(run.files.terminal, run.output).toBeUndefined();
    expect(run.files.ready?.search_tools?.rg).toEqual({ path: join(bin, "rg"), source: "path" });
  });
});

it("in a git repository, a delegate's artifacts never show in git status", async () => {
  const repo = await makeTempDir("search-git");
  execFileSync("git", ["init", "-q"], { cwd: repo });
  await writeFile(join(repo, "README.md"), "# project\n");
  execFileSync("git", ["add", "-A"], { cwd: repo });
  execFileSync("git", ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "init"], {
    cwd: repo,
  });
  server.reset();
  const run = await runChildTask({ agentDir: agent.dir, cwd: repo, prompt: `Answer. ${script({ text: "done" })}` });
  expect(run.files.result, run.output).toBeDefined();
  expect(execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: repo, encoding: "utf8" })).toBe(
    "",
  );
});
