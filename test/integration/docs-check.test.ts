/**
 * The docs generator keeps the generated blocks of docs/ true to the code. It loads the extension
 * with pi's own loader, so these tests run it as a separate Node process, exactly as
 * `npm run docs:check` does, on the real tree and on a scratch copy (the real src/ is never edited).
 */
import { execFile } from "node:child_process";
import { cp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/temp.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const GENERATOR = join(ROOT, "scripts", "docs", "generate.mjs");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function generator(args: string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [GENERATOR, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      done({ code, stdout, stderr });
    });
  });
}

/** package.json, src/, docs/ and scripts/hosts.mjs (the tested hosts) copied; node_modules linked so the copy resolves its dependencies. */
async function scratchCopy(): Promise<string> {
  const dir = await makeTempDir("docs", "each");
  for (const entry of ["package.json", "src", "docs", "scripts/hosts.mjs"]) {
    await cp(join(ROOT, entry), join(dir, entry), { recursive: true });
  }
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** In the copy `dir`, `from` replaced by `to` in the file `path` (which must change). */
async function replaceIn(dir: string, path: string, from: string | RegExp, to: string): Promise<void> {
  const before = await readFile(join(dir, path), "utf8");
  const after = before.replace(from, to);
  expect(after).not.toBe(before);
  await writeFile(join(dir, path), after);
}

/** docs:check on the copy `dir`, which must fail (exit 1); what it printed on stderr. */
async function failedCheck(dir: string): Promise<string> {
  const run = await generator(["--check", "--root", dir]);
  expect(run.code).toBe(1);
  return run.stderr;
}

/** A page with the bodies of its generated blocks removed: what the generator must never touch. */
function outsideBlocks(text: string): string {
  return text.replace(/(<!-- pi-docs:begin [^>]*-->)[\s\S]*?(<!-- pi-docs:end [^>]*-->)/g, "$1$2");
}

describe("docs:check", () => {
  it("passes on this tree", async () => {
    const run = await generator(["--check"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });

  it("fails, naming the block, when a schema description or a remediation changes without regenerating", async () => {
    const dir = await scratchCopy();
    await replaceIn(
      dir,
      "src/arguments/result-arguments.ts",
      'description: "',
      'description: "Changed without regenerating. ',
    );
    await replaceIn(dir, "src/core/errors.ts", 'task_ambiguous: "', 'task_ambiguous: "Changed remediation. ');

    const stale = await failedCheck(dir);
    expect(stale).toContain('docs/tools/bg_result.md: block "tool-contract-bg_result" is stale');
    expect(stale).toContain("Changed without regenerating.");
    expect(stale).toContain('docs/failure-codes.md: block "failure-codes" is stale');
    expect(stale).not.toContain("tool-contract-bg_delegate");

    // Regenerating repairs it, touching nothing outside the blocks.
    const pages = ["docs/tools/bg_result.md", "docs/failure-codes.md"];
    const before = await Promise.all(pages.map((page) => readFile(join(dir, page), "utf8")));
    const generated = await generator(["--root", dir]);
    expect(generated.code).toBe(0);
    const after = await Promise.all(pages.map((page) => readFile(join(dir, page), "utf8")));
    expect(after.map(outsideBlocks)).toEqual(before.map(outsideBlocks));
    expect(after[0]).toContain("Changed without regenerating.");
    expect(after[1]).toContain("Changed remediation.");
    const fresh = await generator(["--check", "--root", dir]);
    expect(fresh.stderr).toBe("");
    expect(fresh.code).toBe(0);
  });

  it("fails when a block is missing or a registered tool has no page", async () => {
    const dir = await scratchCopy();
    const block =
      /<!-- pi-docs:begin name="tool-contract-bg_delegate"[\s\S]*?<!-- pi-docs:end name="tool-contract-bg_delegate" -->\n/;
    await replaceIn(dir, "docs/tools/bg_delegate.md", block, "");
    await rm(join(dir, "docs", "tools", "bg_result.md"));

    const stderr = await failedCheck(dir);
    expect(stderr).toContain('docs/tools/bg_delegate.md: block "tool-contract-bg_delegate" is missing');
    expect(stderr).toContain('docs/tools/bg_result.md: page missing (needed for block "tool-contract-bg_result")');
  });

  it("fails when a comment cites a heading, or a page links an anchor, that does not exist", async () => {
    const dir = await scratchCopy();
    // A heading renamed without renaming where the code cites it and where a page links to it.
    await replaceIn(dir, "docs/subsystems/launch.md", "\n## The spend cap\n", "\n## What a delegate may spend\n");
    const cited = '(docs/configuration.md, "Fusion candidates")';
    await replaceIn(dir, "src/core/settings.ts", cited, '(docs/configuration.md, "Candidates")');

    const stderr = await failedCheck(dir);
    expect(stderr).toMatch(/src\/core\/settings\.ts:\d+: cites docs\/configuration\.md, "Candidates": no such heading/);
    expect(stderr).toMatch(/cites docs\/subsystems\/launch\.md, "The spend cap": no such heading/);
    expect(stderr).toMatch(
      /docs\/configuration\.md:\d+: links to subsystems\/launch\.md#the-spend-cap: no such heading/,
    );
  });
});
