/**
 * One interactive-terminal test's setup and teardown: a fresh agent dir on the scripted server and a
 * fresh project, Pi's interactive mode on `fake/fake-model` with its first message ("go" unless
 * told), the test's look at the screen, then held children released, the terminal closed and no
 * process of the agent dir left.
 *
 *   await withInteractivePi(server, { label: "tui-x", cols: 80, rows: 40, held }, async (tty) => {
 *     await tty.waitFor(/Started it\./, "the reply");
 *   });
 */
import { expect } from "vitest";
import { createAgentDir, FAKE_MODELS, FAKE_PROVIDER, type FakeModelSpec } from "./agent-dir.ts";
import { isChildRequest } from "./drive.ts";
import type { ModelServer } from "./model-server.ts";
import { makeTempDir, waitForNoProcesses } from "./temp.ts";
import { type InteractivePi, startInteractivePi } from "./terminal.ts";

export interface TuiRunOptions {
  /** The project's temp dir label. */
  label: string;
  cols: number;
  rows: number;
  /** Pi's first message; default "go". */
  message?: string;
  /** The agent dir's `fake` models, when not the default ones. */
  models?: readonly FakeModelSpec[];
  /** Fills the project before Pi starts (task trees, source files). */
  prepare?: (cwd: string) => void;
  /** Released before the terminal closes, so children it holds can end. */
  held?: { release(): void };
}

export interface TuiRun {
  agentDir: string;
  cwd: string;
}

export async function withInteractivePi(
  server: { url: string },
  options: TuiRunOptions,
  look: (tty: InteractivePi, run: TuiRun) => Promise<void>,
): Promise<void> {
  const agent = await createAgentDir({ serverUrl: server.url, models: options.models });
  const cwd = await makeTempDir(options.label);
  options.prepare?.(cwd);
  const tty = await startInteractivePi({
    agentDir: agent.dir,
    cwd,
    cols: options.cols,
    rows: options.rows,
    provider: FAKE_PROVIDER,
    model: FAKE_MODELS.default,
    message: options.message ?? "go",
  });
  try {
    await look(tty, { agentDir: agent.dir, cwd });
  } finally {
    options.held?.release();
    await tty.close();
  }
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
}

/**
 * The parent of a terminal test that starts held delegates: on "go" it calls bg_delegate once per
 * name (prompt "Take your time."), answers the receipts with `receiptReply` and anything else with
 * "Nothing else to do."; every child request waits for `held`, then answers `childAnswer`.
 */
export function driveHeldDelegates(
  server: ModelServer,
  held: { wait: Promise<void> },
  names: readonly string[],
  receiptReply: string,
  childAnswer = "done",
): void {
  server.setHandler(async (req) => {
    if (isChildRequest(req)) {
      await held.wait;
      return { text: childAnswer };
    }
    const last = req.messages.at(-1);
    if (last?.role === "user" && last.text === "go") {
      return { toolCalls: names.map((name) => ({ name: "bg_delegate", args: { name, prompt: "Take your time." } })) };
    }
    return { text: last?.role === "tool" ? receiptReply : "Nothing else to do." };
  });
}
