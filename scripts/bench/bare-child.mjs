/**
 * The baseline of figures 2 and 5: a bare `pi -p` child doing the same scripted work as a delegate
 * (same model, same read tool, same answer), started the way the package starts its children —
 * pi's CLI under this node, prompt on stdin then closed, output to a file — but without this
 * package, its guard, a seed or a session file. Timed from spawn to exit.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { isAlive } from "./pids.mjs";
import { MODEL, PI_CLI, PROVIDER } from "./workspace.mjs";

function bareEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("PI_BG_DELEGATE_")) delete env[key];
  return env;
}

let runs = 0;

/** Start one bare child; resolves when it exits. The pid is registered for cleanup at once. */
export function startBareChild(ws, { cwd, prompt }) {
  const outputPath = join(ws.root, `bare-${process.pid}-${++runs}.log`);
  const fd = openSync(outputPath, "w", 0o600);
  const argv = [
    PI_CLI,
    "-p",
    "--no-builtin-tools",
    "--tools",
    "read,grep,find,ls",
    "--no-skills",
    "--no-prompt-templates",
    "--no-themes",
    "--no-context-files",
    "--no-extensions",
    "--no-session",
    "--provider",
    PROVIDER,
    "--model",
    MODEL,
    "--thinking",
    "off",
  ];
  const started = performance.now();
  // Detached like a delegate (execa detached: true): a new session, hence its own scheduler
  // autogroup on Linux. Otherwise, on a busy machine, N bare children would share one group's CPU
  // while N delegates got N shares, and the comparison would favour the delegates.
  const child = spawn(process.execPath, argv, { cwd, env: bareEnv(), stdio: ["pipe", fd, fd], detached: true });
  closeSync(fd);
  ws.onClose(() => {
    if (child.pid === undefined || !isAlive(child.pid)) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  });
  child.stdin.end(prompt);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const ended = performance.now();
      resolve({
        wallMs: ended - started,
        startedAt: started,
        endedAt: ended,
        code,
        signal,
        output: readFileSync(outputPath, "utf8"),
      });
    });
  });
}
