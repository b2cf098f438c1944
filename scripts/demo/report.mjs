/** Printing for the demo: sections, the task's artifact tree with sizes, and the answer's hash check. */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

export function section(title, body) {
  const rule = "─".repeat(Math.max(8, 72 - title.length - 4));
  process.stdout.write(`\n── ${title} ${rule}\n${body.trimEnd()}\n`);
}

function formatSize(bytes) {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** The tree under `dir` (named relative to the project), one line per entry, directories first, sizes of files. */
export function artifactTree(dir, projectDir) {
  const lines = [`${relative(projectDir, dir)}/   (in ${projectDir})`];
  const walk = (at, depth) => {
    const entries = readdirSync(at, { withFileTypes: true }).sort(
      (a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || a.name.localeCompare(b.name),
    );
    for (const entry of entries) {
      const path = join(at, entry.name);
      const indent = "  ".repeat(depth);
      if (entry.isDirectory()) {
        lines.push(`${indent}${entry.name}/`);
        walk(path, depth + 1);
      } else {
        lines.push(`${indent}${entry.name.padEnd(Math.max(1, 36 - indent.length))} ${formatSize(statSync(path).size)}`);
      }
    }
  };
  walk(dir, 1);
  return lines.join("\n");
}

/**
 * Check the answer bg_result showed against result.json, independently of the package: the bytes'
 * sha256 must equal both the view's `answer.sha256` and the committed `answer.sha256`.
 * Returns the lines to print; throws when anything disagrees.
 */
export function answerCheck(view, answerText, taskDir) {
  const resultPath = join(taskDir, "result.json");
  const result = JSON.parse(readFileSync(resultPath, "utf8"));
  const shown = sha256(Buffer.from(answerText, "utf8"));
  const committed = result.answer?.sha256;
  const lines = [
    `sha256 of the answer shown above:     ${shown}`,
    `bg_result details answer.sha256:      ${view.answer.sha256}`,
    `${relative(taskDir, resultPath)} answer.sha256:            ${committed}`,
    `result.json answer: ${result.answer?.byte_length} bytes in ${result.answer?.blocks?.length} block(s); ` +
      `${result.turns} turns, ${result.tool_calls} tool calls, ${result.evidence?.length ?? 0} evidence rows (inspect calls seen).`,
  ];
  if (shown !== view.answer.sha256 || shown !== committed) {
    throw new Error(`answer hash mismatch:\n${lines.join("\n")}`);
  }
  lines.push("All three agree: the answer printed is byte for byte the one the child committed.");
  return lines.join("\n");
}
