/**
 * Views at 0 and 1,000 trees (issue 43 item 2; docs/benchmarks.md, "Views at 1,000 trees"), side by
 * side in one run:
 * - idle `/delegates`: the CPU seconds one minute of its refresh loop costs (60 refreshes of
 *   listRows with the view's row cache, src/tasks/row-cache.ts), in this process, nothing running;
 *   beside it the same minute without the cache (every row read each refresh, as before);
 * - `pi-bg-delegate list` and `show <newest>`: wall time of the real command line at 1,000 trees ÷
 *   the same command in a project holding one tree. In both, the newest session ("today") holds one
 *   task, made after the history: `list` prints today's session, `show` today's task.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { createJiti } from "jiti";
import { verifyHistoryTrees, writeHistoryTrees } from "../history-trees.mjs";
import { figure } from "../stats.mjs";

const jiti = createJiti(import.meta.url);
const CLI = resolve(import.meta.dirname, "../../../bin/pi-bg-delegate.mjs");

function cpuSeconds(run) {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

function cliMs(cwd, args, env) {
  const start = performance.now();
  execFileSync(process.execPath, [CLI, ...args], { cwd, env, stdio: "ignore" });
  return performance.now() - start;
}

export async function viewsHistoryFigures({ trees, reps, log }) {
  const root = mkdtempSync(join(tmpdir(), "bench-history-"));
  const agentDir = join(root, "agent");
  mkdirSync(agentDir, { recursive: true, mode: 0o700 });
  const previous = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = agentDir;
  const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir };
  try {
    const { listRows } = await jiti.import("../../../src/tasks/seam.ts");
    const { RowCache, VIEW_RECHECK_MS } = await jiti.import("../../../src/tasks/row-cache.ts");
    const small = join(root, "one");
    const big = join(root, "history");
    mkdirSync(small);
    mkdirSync(big);
    // Today's session holds one task in both projects; the history project also holds `trees` older
    // ones (a month of them, written here within seconds, then today's task made a while later).
    const { writeCompletedTask } = await jiti.import("../../../test/helpers/task-tree.ts");
    const today = (cwd) => writeCompletedTask(cwd, { session: "today", name: "today's task" }).taskDir;
    const oneDir = today(small);
    log(`views-history: writing ${trees} trees`);
    await writeHistoryTrees(big, { count: trees }); // returns once the history is 2.5 s old
    const bigDirs = [today(big)];
    const verified = await verifyHistoryTrees(big);
    log(`views-history: ${verified} trees verified`);
    // One minute of the view's loop is 60 refreshes; the uncached one (every row read each time,
    // as before the cache) is timed over 6 and scaled to a minute, or it would take minutes.
    // The view's cache as /delegates makes it, on a clock that moves one second per refresh (the
    // view refreshes once a second), so its whole-store reads come every VIEW_RECHECK_MS as they would.
    const idle = (cwd, cached) => {
      let now = Date.now();
      const cache = new RowCache({ recheckMs: VIEW_RECHECK_MS, now: () => now });
      listRows(cwd, { verify: false, cache }); // the view's first read, when it opens
      const refreshes = cached ? 60 : 6;
      const seconds = cpuSeconds(() => {
        for (let i = 0; i < refreshes; i++) {
          now += 1_000;
          listRows(cwd, { verify: false, ...(cached ? { cache } : {}) });
        }
      });
      return (seconds * 60) / refreshes;
    };
    const idleCached = [];
    const idleUncached = [];
    for (let i = 0; i < reps; i++) {
      idleCached.push(idle(big, true));
      idleUncached.push(idle(big, false));
    }
    const idleEmpty = idle(small, true);
    const show = (dir) => dir.split("/").at(-1);
    // One untimed round first: Node's and jiti's caches, and the rows `list` keeps between runs
    // (src/tasks/row-cache-file.ts) — a month of use has listed the project before.
    for (const [cwd, dir] of [
      [small, oneDir],
      [big, bigDirs.at(-1)],
    ]) {
      cliMs(cwd, ["list"], env);
      cliMs(cwd, ["show", show(dir)], env);
    }
    const ratios = { list: [], show: [] };
    const ms = { list: [[], []], show: [[], []] };
    for (let i = 0; i < reps; i++) {
      const l0 = cliMs(small, ["list"], env);
      const l1 = cliMs(big, ["list"], env);
      const s0 = cliMs(small, ["show", show(oneDir)], env);
      const s1 = cliMs(big, ["show", show(bigDirs.at(-1))], env);
      ms.list[0].push(l0);
      ms.list[1].push(l1);
      ms.show[0].push(s0);
      ms.show[1].push(s1);
      ratios.list.push(l1 / l0);
      ratios.show.push(s1 / s0);
    }
    const params = { trees, reps };
    return [
      figure({
        id: "views-idle-delegates",
        title: `idle /delegates at ${trees} trees, CPU-s per minute of refreshes`,
        unit: "CPU-s/min",
        samples: idleCached,
        target: 0.1,
        params,
        detail: { without_cache: idleUncached, one_tree: idleEmpty },
        notes: [
          "in-process, after the first read: 60 refreshes of listRows with the view's row cache, one a second on the cache's clock (a whole-store read every VIEW_RECHECK_MS); without_cache: every row read each refresh (6, scaled to a minute)",
        ],
      }),
      figure({
        id: "views-list",
        title: `pi-bg-delegate list, ${trees} trees ÷ one tree`,
        unit: "×",
        samples: ratios.list,
        target: 1.2,
        params,
        detail: { ms_one_tree: ms.list[0], ms_history: ms.list[1] },
      }),
      figure({
        id: "views-show",
        title: `pi-bg-delegate show <newest>, ${trees} trees ÷ one tree`,
        unit: "×",
        samples: ratios.show,
        target: 1.1,
        params,
        detail: { ms_one_tree: ms.show[0], ms_history: ms.show[1] },
      }),
    ];
  } finally {
    if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = previous;
    rmSync(root, { recursive: true, force: true });
  }
}
