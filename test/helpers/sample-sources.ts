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

/** Write `lines` as the project extension `.pi/extensions/<name>` of `cwd` (pi loads it in ambient mode); its path. */
export async function writeProjectExtension(cwd: string, name: string, lines: string[]): Promise<string> {
  const dir = join(cwd, ".pi", "extensions");
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await writeFile(path, [...lines, ""].join("\n"));
  return path;
}
