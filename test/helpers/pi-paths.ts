/** Where things are, for the drivers: this repository (the package pi loads) and pi's own CLI. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: a pi package (package.json "pi": {"extensions": [...]}). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** pi's CLI entry (dist/cli.js) of the pinned devDependency, the one the host itself would run. */
export const PI_CLI_PATH = join(REPO_ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
if (!existsSync(PI_CLI_PATH)) throw new Error(`pi CLI not found at ${PI_CLI_PATH}; run npm install`);

/** Concatenated text blocks of a message (string content is returned as is). */
export function assistantText(message: { content?: unknown }): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("");
}
