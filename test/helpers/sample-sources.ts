/** Files the tests put in a project: sources for a child (or the evidence checks) to read and grep, and project extensions. */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** A six-line auth module: login at lines 2-4, TTL at line 5. */
export const AUTH_SOURCE = [
  "// auth",
  "export function login(user) {",
  "  return token(user);",
  "}",
  "export const TTL = 60;",
  "",
].join("\n");

/**
 * A fake Pi's dist/cli/args.js that knows `known` flags (its parseArgs reports any other first
 * argument as unknown) and leaves a witness file named by its pid in `witnessDir` when imported.
 */
export function witnessArgsJs(witnessDir: string, known: readonly string[]): string {
  return [
    'import { writeFileSync } from "node:fs";',
    `writeFileSync(${JSON.stringify(witnessDir)} + "/" + process.pid, "imported");`,
    `const known = new Set(${JSON.stringify(known)});`,
    "export function parseArgs(args) {",
    "  return { unknownFlags: new Map(known.has(args[0]) ? [] : [[args[0], true]]), diagnostics: [] };",
    "}",
  ].join("\n");
}

/** An outputSchema asking for the TTL (an integer) and the places (strings), a note optional. */
export const TTL_PLACES_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["ttl", "places"],
  properties: {
    ttl: { type: "integer" },
    places: { type: "array", items: { type: "string" } },
    note: { type: "string" },
  },
};

/** Write `lines` as the project extension `.pi/extensions/<name>` of `cwd` (pi loads it in ambient mode); its path. */
export async function writeProjectExtension(cwd: string, name: string, lines: string[]): Promise<string> {
  const dir = join(cwd, ".pi", "extensions");
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await writeFile(path, [...lines, ""].join("\n"));
  return path;
}
