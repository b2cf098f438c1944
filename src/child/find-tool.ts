/**
 * The child's `find` when no fd exists (src/core/search-tools.ts): Pi's own find tool (same
 * arguments, limit, truncation and output text) with its glob served by `rg --files`, which applies
 * the same ignore files fd does (.gitignore, .ignore, git excludes; hidden files listed, `.git` not).
 * Differences from fd: files only (no directory entries), and `.rgignore` instead of `.fdignore`.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { isAbsolute, join, sep } from "node:path";
import { createFindToolDefinition, type FindOperations } from "@mariozechner/pi-coding-agent";
import { globMatcher } from "./glob.ts";

/**
 * `rg --files` arguments: every file the ignore rules keep (an include glob would override them in
 * rg, so the pattern is matched here instead); paths come back absolute (0.73.1's find relativizes).
 */
export function rgFilesArgs(searchPath: string, ignore: readonly string[]): string[] {
  return [
    "--files",
    "--no-config",
    "--color=never",
    "--hidden",
    "--no-require-git",
    "--glob",
    "!.git",
    ...ignore.flatMap((glob) => ["--glob", `!${glob}`]),
    "--",
    searchPath,
  ];
}

/** At most `limit` files matching `pattern`; rg is stopped as soon as the limit is reached. */
export function rgGlob(rgPath: string, pattern: string, cwd: string, limit: number, ignore: readonly string[]) {
  const searchPath = isAbsolute(cwd) ? cwd : join(process.cwd(), cwd);
  const matches = globMatcher(pattern);
  const prefix = searchPath.endsWith(sep) ? searchPath : `${searchPath}${sep}`;
  const accept = (line: string) => line.startsWith(prefix) && matches(line.slice(prefix.length).split(sep).join("/"));
  return new Promise<string[]>((resolve, reject) => {
    const child = spawn(rgPath, rgFilesArgs(searchPath, ignore), { stdio: ["ignore", "pipe", "pipe"] });
    const found: string[] = [];
    let pending = "";
    let stderr = "";
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      if (error) reject(error);
      else resolve(found);
    };
    const take = (line: string) => {
      if (line !== "" && found.length < limit && accept(line)) found.push(line);
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) take(line);
      if (found.length >= limit) {
        child.kill();
        finish();
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", (error) => finish(error));
    child.on("close", (code) => {
      take(pending);
      // rg exits 1 when it listed nothing; 2 is an error (an unreadable path).
      if (code === 2 && found.length === 0) finish(new Error(stderr.trim() || "rg failed"));
      else finish();
    });
  });
}

export function createRgFindTool(cwd: string, rgPath: string) {
  const operations: FindOperations = {
    exists: (path) => existsSync(path),
    glob: (pattern, searchCwd, options) => rgGlob(rgPath, pattern, searchCwd, options.limit, options.ignore),
  };
  return createFindToolDefinition(cwd, { operations });
}
