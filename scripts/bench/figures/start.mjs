/**
 * What a Pi start pays for the package (issue 43 items 1 and 3; docs/benchmarks.md, "Pi start"),
 * side by side in one run, each sample a real `pi -p` of the bench's host answering one prompt from
 * the scripted model, runs interleaved:
 * - module import: the extension's import as Pi itself reports it (`PI_TIMING=1`, "<path> module
 *   import") ÷ a one-tool extension's (one TypeBox parameter, one execute), in an empty project —
 *   on Pi 1.x; Pi 0.73.1 reports no import per extension, so there the figure is left out;
 * - `pi -p` with the package ÷ with the one-tool extension, whole wall time, in an empty project;
 * - `pi -p` with the package in a project of `trees` stored trees ÷ in an empty project (a session
 *   start there loads the package's code and looks for pending notices; the daily prune ran before).
 * - `/new` at `trees` trees ÷ in an empty project: an RPC Pi with the package in each project, its
 *   `new_session` command timed from the request to Pi's response, interleaved.
 * - `/reload` at `trees` trees ÷ in an empty project: an SDK parent in each project (Pi's own
 *   `AgentSession.reload()`: shutdown, the extensions loaded again, session start), interleaved.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { verifyHistoryTrees, writeHistoryTrees } from "../history-trees.mjs";
import { startSdkParent } from "../sdk-parent.mjs";
import { figure, msSummary } from "../stats.mjs";
import { MODEL, PI_CLI, PROVIDER, REPO_ROOT } from "../workspace.mjs";

const PACKAGE_ENTRY = join(REPO_ROOT, "src", "extension.ts");

const ONE_TOOL = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "@sinclair/typebox";

export default function oneTool(pi: ExtensionAPI): void {
  pi.registerTool({
    name: "one_tool",
    label: "One tool",
    description: "Echo a word.",
    parameters: Type.Object({ word: Type.String({ description: "the word" }) }),
    async execute(_id, params) {
      return { content: [{ type: "text", text: params.word }], details: {} };
    },
  });
}
`;

/** Pi's CLI with only `extension` loaded (no skills, templates, themes or context files), on the scripted model. */
function piArgv(extension) {
  return [
    PI_CLI,
    "--no-extensions",
    "-e",
    extension,
    "--no-skills",
    "--no-prompt-templates",
    "--no-themes",
    "--no-context-files",
    "--provider",
    PROVIDER,
    "--model",
    MODEL,
  ];
}

/** One `pi -p` answering "hi" with `extension` loaded; its wall time and the import Pi reports. */
function piPrint(cwd, extension) {
  const argv = [...piArgv(extension), "--no-session", "--thinking", "off", "-p", "hi"];
  const started = performance.now();
  const child = spawn(process.execPath, argv, {
    cwd,
    env: { ...process.env, PI_TIMING: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      const wallMs = performance.now() - started;
      const line = stderr.split("\n").find((l) => l.includes(`${extension} module import:`));
      const importMs = line === undefined ? Number.NaN : Number(/module import: (\d+)ms/.exec(line)?.[1]);
      if (code !== 0 || !stdout.includes("noted")) {
        reject(new Error(`pi -p with ${extension} failed (exit ${code}):\n${stdout}\n${stderr.slice(-2000)}`));
        return;
      }
      resolve({ wallMs, importMs });
    });
  });
}

/** An RPC Pi with `extension` loaded in `cwd`; `command` resolves with Pi's response and its latency. */
function rpcPi(ws, cwd, extension) {
  const child = spawn(process.execPath, [...piArgv(extension), "--mode", "rpc"], {
    cwd,
    env: process.env,
    stdio: ["pipe", "pipe", "ignore"],
  });
  ws.onClose(() => child.kill("SIGKILL"));
  const waiting = new Map();
  let next = 0;
  createInterface({ input: child.stdout }).on("line", (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.type === "response" && waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  });
  return {
    command(type) {
      const id = `bench-${++next}`;
      const started = performance.now();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`pi --mode rpc: no response to ${type}`)), 60_000);
        waiting.set(id, (message) => {
          clearTimeout(timer);
          if (message.success === false) reject(new Error(`${type} failed: ${message.error}`));
          else resolve(performance.now() - started);
        });
        child.stdin.write(`${JSON.stringify({ id, type })}\n`);
      });
    },
    stop() {
      child.stdin.end();
      return new Promise((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once("exit", () => resolve());
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      });
    },
  };
}

export async function startFigures(ws, { reps, trees, log }) {
  const oneTool = join(ws.root, "one-tool-extension", "index.ts");
  mkdirSync(join(ws.root, "one-tool-extension"));
  writeFileSync(oneTool, ONE_TOOL);
  const empty = ws.project("start-empty");
  const history = ws.project("start-history");
  log(`start: writing ${trees} trees`);
  await writeHistoryTrees(history, { count: trees });
  log(`start: ${await verifyHistoryTrees(history)} trees verified`);
  // Warm-up: Pi's and jiti's caches, and the history project's once-a-day prune (src/runtime.ts).
  for (const [cwd, ext] of [
    [empty, oneTool],
    [empty, PACKAGE_ENTRY],
    [history, PACKAGE_ENTRY],
  ])
    await piPrint(cwd, ext);
  const samples = { import: [], print: [], history: [] };
  const ms = { importPackage: [], importOne: [], printPackage: [], printOne: [], printHistory: [] };
  log(`start: ${reps} interleaved rounds of pi -p (one-tool, package, package at ${trees} trees)`);
  for (let rep = 0; rep < reps; rep++) {
    const one = await piPrint(empty, oneTool);
    const pkg = await piPrint(empty, PACKAGE_ENTRY);
    const hist = await piPrint(history, PACKAGE_ENTRY);
    ms.importOne.push(one.importMs);
    ms.importPackage.push(pkg.importMs);
    ms.printOne.push(one.wallMs);
    ms.printPackage.push(pkg.wallMs);
    ms.printHistory.push(hist.wallMs);
    samples.import.push(pkg.importMs / Math.max(1, one.importMs));
    samples.print.push(pkg.wallMs / one.wallMs);
    samples.history.push(hist.wallMs / pkg.wallMs);
  }
  log(`start: ${reps} interleaved /new (RPC new_session), package in an empty project and at ${trees} trees`);
  const rpcEmpty = rpcPi(ws, empty, PACKAGE_ENTRY);
  const rpcHistory = rpcPi(ws, history, PACKAGE_ENTRY);
  try {
    await rpcEmpty.command("get_state");
    await rpcHistory.command("get_state");
    await rpcEmpty.command("new_session"); // warm-up: the package's code loads in the history project
    await rpcHistory.command("new_session");
    samples.newSession = [];
    ms.newEmpty = [];
    ms.newHistory = [];
    for (let rep = 0; rep < reps; rep++) {
      const e = await rpcEmpty.command("new_session");
      const h = await rpcHistory.command("new_session");
      ms.newEmpty.push(e);
      ms.newHistory.push(h);
      samples.newSession.push(h / e);
    }
  } finally {
    await Promise.all([rpcEmpty.stop(), rpcHistory.stop()]);
  }
  log(`start: ${reps} interleaved /reload (SDK AgentSession.reload), in an empty project and at ${trees} trees`);
  const sdkEmpty = await startSdkParent(ws, { cwd: empty });
  const sdkHistory = await startSdkParent(ws, { cwd: history });
  const reload = async (parent) => {
    const started = performance.now();
    await parent.session.reload();
    return performance.now() - started;
  };
  samples.reload = [];
  ms.reloadEmpty = [];
  ms.reloadHistory = [];
  try {
    await reload(sdkEmpty); // warm-up
    await reload(sdkHistory);
    for (let rep = 0; rep < reps; rep++) {
      const e = await reload(sdkEmpty);
      const h = await reload(sdkHistory);
      ms.reloadEmpty.push(e);
      ms.reloadHistory.push(h);
      samples.reload.push(h / e);
    }
    if (sdkEmpty.extensionErrors.length + sdkHistory.extensionErrors.length > 0)
      throw new Error(`the package failed on reload: ${[...sdkEmpty.extensionErrors, ...sdkHistory.extensionErrors]}`);
  } finally {
    await Promise.all([sdkEmpty.dispose(), sdkHistory.dispose()]);
  }
  const params = { reps, trees };
  const reported = samples.import.every(Number.isFinite);
  if (!reported) log("start: this Pi reports no module import per extension (PI_TIMING); no import figure");
  return [
    ...(reported
      ? [
          figure({
            id: "start-import",
            title: "the extension's module import (PI_TIMING) ÷ a one-tool extension's",
            unit: "×",
            samples: samples.import,
            target: 2,
            params,
            detail: { package_ms: msSummary(ms.importPackage), one_tool_ms: msSummary(ms.importOne) },
            notes: ["Pi's own figure, whole milliseconds; a one-tool import under 1 ms counts as 1 ms"],
          }),
        ]
      : []),
    figure({
      id: "start-print",
      title: "pi -p with the package ÷ with a one-tool extension (empty project)",
      unit: "×",
      samples: samples.print,
      target: 1.1,
      params,
      detail: { package_ms: msSummary(ms.printPackage), one_tool_ms: msSummary(ms.printOne) },
    }),
    figure({
      id: "start-history",
      title: `pi -p with the package at ${trees} trees ÷ in an empty project`,
      unit: "×",
      samples: samples.history,
      target: 1.1,
      params,
      detail: { history_ms: msSummary(ms.printHistory), empty_ms: msSummary(ms.printPackage) },
    }),
    figure({
      id: "start-new-session",
      title: `/new (RPC new_session) with the package at ${trees} trees ÷ in an empty project`,
      unit: "×",
      samples: samples.newSession,
      target: 1.1,
      params,
      detail: { history_ms: msSummary(ms.newHistory), empty_ms: msSummary(ms.newEmpty) },
    }),
    figure({
      id: "start-reload",
      title: `/reload (SDK AgentSession.reload) with the package at ${trees} trees ÷ in an empty project`,
      unit: "×",
      samples: samples.reload,
      target: 1.1,
      params,
      detail: { history_ms: msSummary(ms.reloadHistory), empty_ms: msSummary(ms.reloadEmpty) },
    }),
  ];
}
