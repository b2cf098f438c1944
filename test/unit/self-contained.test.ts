/**
 * The repository cites only itself: no file under src/, scripts/, test/ or docs/, nor README.md,
 * may name a contract, spec or notes file kept outside the repository. The package's own contract
 * is docs/ (docs/INDEX.md). The patterns are assembled from pieces so this file does not match them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SCANNED_DIRS = ["src", "scripts", "test", "docs"];
const SCANNED_FILES = ["README.md"];

const FORBIDDEN = [
  ["CONTRACT", ".md"],
  ["spec/", "bg_"],
  ["notes/", "original-implementation"],
  ["notes/", "pi-host"],
  ["notes/", "pi-1.6"],
  ["notes/", "peers"],
  ["ARCHITECTURE", ".md"],
].map((parts) => parts.join(""));

function walk(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.isFile()) out.push(path);
  }
}

function scannedFiles(): string[] {
  const files: string[] = [];
  for (const dir of SCANNED_DIRS) walk(join(ROOT, dir), files);
  for (const file of SCANNED_FILES) files.push(join(ROOT, file));
  return files;
}

describe("self-contained repository", () => {
  it("names no contract, spec or notes file outside the repository", () => {
    const files = scannedFiles();
    const hits: string[] = [];
    for (const file of files) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, index) => {
        for (const pattern of FORBIDDEN) {
          if (line.includes(pattern)) {
            hits.push(`${relative(ROOT, file).split(sep).join("/")}:${index + 1}: ${pattern}`);
          }
        }
      });
    }
    expect(files.length).toBeGreaterThanOrEqual(50);
    expect(files.map((file) => relative(ROOT, file).split(sep).join("/"))).toContain(
      "test/unit/self-contained.test.ts",
    );
    expect(hits).toEqual([]);
  });
});
