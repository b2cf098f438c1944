/**
 * The folders of src/ import each other in one direction only (docs/INDEX.md, "Where the code is").
 * Each folder has a layer; an import may go to a folder of the same or a lower layer, never up, and
 * the folder graph has no cycle (two folders of one layer may not import each other, directly or not).
 * Nor does any file import itself back through other files (type-only imports included).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/hosts.mjs";

const SRC = join(REPO_ROOT, "src");

/** Higher imports lower. "." is the entry (src/extension.ts). */
const LAYERS: Record<string, number> = {
  core: 0,
  verify: 1,
  views: 1,
  arguments: 2,
  store: 2,
  process: 2,
  child: 2,
  host: 1,
  fusion: 3,
  tasks: 4,
  launch: 5,
  retrieval: 5,
  "fusion-run": 5,
  tools: 6,
  ui: 6,
  cli: 6,
  ".": 7,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function folderOf(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes(sep) ? (rel.split(sep)[0] as string) : ".";
}

/** Every relative import of a file, resolved (`import`, `import type`, `export … from`, `import(…)`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) =>
    resolve(dirname(file), m[1] as string),
  );
}

/** Folder-level edges, each with one file that makes it. */
function folderEdges(): Map<string, string> {
  const edges = new Map<string, string>();
  for (const file of sourceFiles(SRC)) {
    for (const target of importsOf(file)) {
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) edges.set(`${from} -> ${to}`, relative(REPO_ROOT, file));
    }
  }
  return edges;
}

/** The cycles a depth-first walk of a graph meets, each as "a -> b -> a". */
function cyclesOf(next: ReadonlyMap<string, readonly string[]>, nodes: Iterable<string>): string[] {
  const state = new Map<string, "open" | "done">();
  const cycles: string[] = [];
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "open") {
      cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
      return;
    }
    state.set(node, "open");
    for (const to of next.get(node) ?? []) visit(to, [...path, node]);
    state.set(node, "done");
  };
  for (const node of nodes) visit(node, []);
  return cycles;
}

describe("src/ folder graph", () => {
  const edges = folderEdges();
  const folders = new Set(sourceFiles(SRC).map(folderOf));

  it("every folder has a layer (a new folder must be placed)", () => {
    expect([...folders].filter((f) => LAYERS[f] === undefined)).toEqual([]);
    expect(edges.size).toBeGreaterThan(10);
  });

  it("no import goes to a higher layer", () => {
    const upward = [...edges].filter(([edge]) => {
      const [from, to] = edge.split(" -> ") as [string, string];
      return (LAYERS[from] ?? 0) < (LAYERS[to] ?? 0);
    });
    expect(upward).toEqual([]);
  });

  it("has no cycle", () => {
    const next = new Map<string, string[]>();
    for (const edge of edges.keys()) {
      const [from, to] = edge.split(" -> ") as [string, string];
      next.set(from, [...(next.get(from) ?? []), to]);
    }
    expect(cyclesOf(next, folders)).toEqual([]);
  });
});

describe("src/ file graph", () => {
  const files = sourceFiles(SRC);
  const next = new Map(files.map((file) => [relative(SRC, file), importsOf(file).map((t) => relative(SRC, t))]));

  it("reads the imports it checks (every target is a file of src/)", () => {
    const targets = [...next.values()].flat();
    expect(targets.length).toBeGreaterThan(files.length);
    expect(targets.filter((t) => !next.has(t))).toEqual([]);
  });

  it("has no file circle", () => {
    expect(cyclesOf(next, next.keys())).toEqual([]);
  });

  it("reaches src/host/ only through its door, host/index.ts", () => {
    const inHost = (path: string) => path.startsWith(`host${sep}`);
    const door = join("host", "index.ts");
    // The entry, which loads at every Pi start, reads only the list of proven versions, after the
    // start and without the host's code behind the door (docs/subsystems/launch.md, "Loading on first use").
    const entryReadsVersions = `extension.ts -> ${join("host", "proven.ts")}`;
    const fromOutside = [...next]
      .filter(([file]) => !inHost(file))
      .flatMap(([file, targets]) => targets.filter(inHost).map((t) => `${file} -> ${t}`));
    expect(fromOutside.length).toBeGreaterThan(5);
    expect(fromOutside.filter((edge) => !edge.endsWith(` -> ${door}`) && edge !== entryReadsVersions)).toEqual([]);
  });
});
