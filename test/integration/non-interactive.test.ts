/**
 * `pi -p` and `pi --mode json` with a delegate (docs/configuration.md, "Non-interactive Pi"):
 * the process does not exit while its delegate runs; the notice is delivered, the turn it triggers
 * runs (bg_result → the verified answer) and its final answer is what the process prints. With
 * "cancel", or when the delegate fails, the process names it on stderr and exits non-zero.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { NON_INTERACTIVE_ENV, TASK_FILES } from "../../src/core/constants.ts";
import { isChildRequest } from "../helpers/drive.ts";
import { freshProject } from "../helpers/held-project.ts";
import { type AgentDir, HOST, printRun, script, useModelServer, waitForNoProcesses } from "../helpers/pi-parent.ts";
import { taskDirs } from "./launch-support.ts";

const server = useModelServer();
const CHILD_ANSWER = "NON-INTERACTIVE CHILD ANSWER 9182";

/**
 * The parent's model: "go" → bg_delegate (the child answers after a pause, so the parent's own run
 * ends first); its final reply before the notice says it is waiting; the notice → bg_result; the
 * bg_result → a final answer quoting the verified text.
 */
function driveParent(childDelayMs: number): void {
  server.setHandler((req) => {
    if (isChildRequest(req)) return undefined; // the child's own script answers
    const last = req.messages.at(-1);
    if (last?.role === "user" && last.text.startsWith("go")) {
      return {
        toolCalls: [
          {
            name: "bg_delegate",
            args: { name: "scripted", prompt: `Answer. ${script({ text: CHILD_ANSWER, delayMs: childDelayMs })}` },
          },
        ],
      };
    }
    if (last?.role === "tool" && last.text.includes("Verified answer")) {
      return { text: `FINAL USING: ${last.text.includes(CHILD_ANSWER) ? CHILD_ANSWER : "nothing verified"}` };
    }
    if (last?.role === "tool") return { text: "Delegated; waiting for the notification." };
    if (last?.role === "user" && /d[0-9a-f]{32}/.test(last.text)) {
      return { toolCalls: [{ name: "bg_result", args: { taskId: "d" } }] };
    }
    return { text: "noted" };
  });
}

async function runPi(agent: AgentDir, cwd: string, mode: string[], env: Record<string, string> = {}) {
  const print = printRun(agent.dir, cwd, [...mode, "go"], { env });
  return execa(print.file, print.args, print.options);
}

function manifestOf(cwd: string): { state: string; terminal: { code?: string } | null } {
  const [dir] = taskDirs(cwd);
  return JSON.parse(readFileSync(join(dir as string, TASK_FILES.manifest), "utf8"));
}

describe(`non-interactive Pi ${HOST.version} keeps its delegates`, () => {
  it("pi -p waits for the delegate, runs the turn its notice triggers and prints the answer built on the verified result", async () => {
    const { agentDir: agent, cwd } = await freshProject(server, "print-wait");
    driveParent(1_500);
    const run = await runPi(agent, cwd, ["-p"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toBe(`FINAL USING: ${CHILD_ANSWER}`);
    expect(manifestOf(cwd).state).toBe("completed");
    expect(run.stderr).not.toContain("pi-bg-delegate:");
    expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
  });

  it("pi --mode json does the same: the event stream ends with the final answer", async () => {
    const { agentDir: agent, cwd } = await freshProject(server, "json-wait");
    driveParent(1_500);
    const run = await runPi(agent, cwd, ["--mode", "json"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const events = run.stdout
      .split("\n")
      .filter((l) => l.trim().startsWith("{"))
      .map(
        (l) =>
          JSON.parse(l) as { type: string; message?: { role?: string; content?: { type: string; text?: string }[] } },
      );
    const finals = events
      .filter((e) => e.type === "message_end" && e.message?.role === "assistant")
      .map((e) => (e.message?.content ?? []).map((c) => c.text ?? "").join(""));
    expect(finals.at(-1)).toBe(`FINAL USING: ${CHILD_ANSWER}`);
    expect(manifestOf(cwd).state).toBe("completed");
    expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
  });

  it(`with ${NON_INTERACTIVE_ENV}=cancel the delegate is cancelled, named on stderr, and the exit status is non-zero`, async () => {
    const { agentDir: agent, cwd } = await freshProject(server, "print-cancel");
    driveParent(20_000);
    const run = await runPi(agent, cwd, ["-p"], { [NON_INTERACTIVE_ENV]: "cancel" });
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toMatch(
      /pi-bg-delegate: delegate d[0-9a-f]{32} "scripted" cancelled \[child_cancelled\]: Pi exited while it ran/,
    );
    const manifest = manifestOf(cwd);
    expect(manifest.state).toBe("cancelled");
    expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
  });
});
