/**
 * Signals in `pi -p` and `pi --mode json` (docs/configuration.md, "Non-interactive Pi"): SIGTERM
 * and SIGINT, sent during the turn that launched a long-running delegate or while Pi waits for it,
 * end the child at once, record it as `child_cancelled`, name it on stderr and exit with Pi's own
 * status (143 after SIGTERM, 130 after SIGINT). The child's model reply is held for ten minutes: a
 * process that waited for it instead would fail the test by its timeout.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { gate, isChildRequest, until } from "../helpers/drive.ts";
import { freshProject } from "../helpers/held-project.ts";
import { HOST, printRun, script, useModelServer, waitForNoProcesses } from "../helpers/pi-parent.ts";
import { taskDirs } from "./launch-support.ts";

const server = useModelServer();
const WAITING = "Delegated; waiting for the notification.";

type Phase = "launch turn" | "waiting";

/**
 * The parent's model: "go" → bg_delegate of a child whose reply takes ten minutes. The reply after
 * the receipt is held until `launchTurn` is released (phase "launch turn": the signal comes while
 * the launching turn still runs) or given at once (phase "waiting": the run ends and Pi waits).
 */
function driveParent(phase: Phase, launchTurn: ReturnType<typeof gate>): void {
  server.setHandler(async (req) => {
    if (isChildRequest(req)) return undefined; // the child's own script answers, after 600 s
    const last = req.messages.at(-1);
    if (last?.role === "user" && last.text.startsWith("go")) {
      const prompt = `Answer. ${script({ text: "never delivered", delayMs: 600_000 })}`;
      return { toolCalls: [{ name: "bg_delegate", args: { name: "long", prompt } }] };
    }
    if (last?.role === "tool" && phase === "launch turn") await launchTurn.wait;
    return { text: WAITING };
  });
}

function manifestOf(cwd: string): { state: string; terminal: { code?: string } | null } {
  const [dir] = taskDirs(cwd);
  return JSON.parse(readFileSync(join(dir as string, TASK_FILES.manifest), "utf8"));
}

async function signalled(signal: "SIGTERM" | "SIGINT", phase: Phase, mode: string[]) {
  const { agentDir: agent, cwd } = await freshProject(server, `signal-${signal}`);
  const launchTurn = gate();
  driveParent(phase, launchTurn);
  const print = printRun(agent.dir, cwd, [...mode, "go"], { timeout: 120_000 });
  const pi = execa(print.file, print.args, print.options);
  let stdout = "";
  pi.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  try {
    // The child runs (its model request is held) and the parent's turn after the receipt began.
    await server.waitForRequest(isChildRequest, 60_000);
    await server.waitForRequest((r) => !isChildRequest(r) && r.messages.at(-1)?.role === "tool", 60_000);
    if (phase === "waiting" && mode.includes("json")) {
      // json mode shows the run's last reply: after it, Pi waits for the delegate.
      await until(() => stdout.includes(WAITING), "the run's last reply on stdout", 60_000);
    }
    pi.kill(signal);
    const run = await pi;
    return { run, cwd, agent };
  } finally {
    launchTurn.release();
  }
}

const CASES: [signal: "SIGTERM" | "SIGINT", phase: Phase, mode: string[], status: number][] = [
  ["SIGTERM", "launch turn", ["-p"], 143],
  ["SIGTERM", "waiting", ["--mode", "json"], 143],
  ["SIGTERM", "waiting", ["-p"], 143],
  ["SIGINT", "launch turn", ["-p"], 130],
  ["SIGINT", "waiting", ["--mode", "json"], 130],
];

describe(`non-interactive Pi ${HOST.version}: a signal ends its delegates at once`, () => {
  for (const [signal, phase, mode, status] of CASES) {
    it(`${signal} during the ${phase} (pi ${mode.join(" ")}): the child is cancelled and named, exit ${status}`, async () => {
      const { run, cwd, agent } = await signalled(signal, phase, mode);
      expect(run.timedOut).toBe(false);
      expect(run.exitCode, run.stderr).toBe(status);
      expect(run.stderr).toMatch(
        new RegExp(
          `pi-bg-delegate: delegate d[0-9a-f]{32} "long" cancelled \\[child_cancelled\\]: Pi received ${signal}`,
        ),
      );
      // Named once, not again by the exit report.
      expect(run.stderr.match(/pi-bg-delegate: delegate/g)).toHaveLength(1);
      const manifest = manifestOf(cwd);
      expect(manifest.state).toBe("cancelled");
      expect(manifest.terminal?.code).toBe("child_cancelled");
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    });
  }
});
