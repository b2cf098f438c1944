/**
 * The bench's store of history (docs/benchmarks.md, "Views at 1,000 trees"): `count` completed
 * delegate trees in one project, written by the package's own builders as a launch and its
 * adjudication write them (test/helpers/task-tree.ts: seed, manifest, a committed result.json,
 * adjudicateTask), each with its own id, path and binding hashes and signed as this user for this
 * project. Every tree is checked with the package's verifier before anything is measured; a tree
 * that does not verify stops the figure. Not copies of real children's trees: fixture trees with
 * real signatures and real hashes.
 */
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);

/** `count` trees across `sessions` session directories, oldest first; returns their dirs. */
export async function writeHistoryTrees(cwd, { count, sessions = 10 }) {
  const { writeCompletedTask } = await jiti.import("../../test/helpers/task-tree.ts");
  const dirs = [];
  for (let i = 0; i < count; i++) {
    const task = writeCompletedTask(cwd, {
      session: `history-session-${String(i % sessions).padStart(3, "0")}`,
      name: `history task ${i}`,
      answer: `Answer ${i}: the cache is invalidated in src/cache.ts:${i + 1}.\n`,
    });
    dirs.push(task.taskDir);
  }
  // A month of trees is old: wait until no session directory is "racy" (changed within 2 s, too
  // recently for its stamp to tell a later change: src/store/ended-index.ts RACY_STAMP_MS), so the
  // figures measure a history, not trees still being written.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  return dirs;
}

/** Each tree read and verified as `list --verify` does; throws naming the first that does not verify. */
export async function verifyHistoryTrees(cwd) {
  const { listRows } = await jiti.import("../../src/tasks/seam.ts");
  const rows = await listRows(cwd, { verify: true });
  const bad = rows.find((r) => r.state !== "completed" || r.code !== null || r.answer_bytes === null);
  if (bad !== undefined) throw new Error(`history tree ${bad.id} does not verify: ${bad.state} ${bad.code}`);
  return rows.length;
}
