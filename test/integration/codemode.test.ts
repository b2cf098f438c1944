/**
 * Structured results for scripts (docs/tools/bg_result.md, "Structured results for scripts"): on a Pi
 * with codemode, a `pi -p` parent's script launches three delegates, waits for their notices and
 * reads the three verified answers as objects — in codemode's modes `on` and `only`; a script steers
 * the delegate it launched and reads bg_steer's result as an object. Real parents, real children, the
 * scripted model.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { isChildRequest } from "../helpers/drive.ts";
import {
  type AgentDir,
  createAgentDir,
  HOST,
  makeTempDir,
  PI_CLI_PATH,
  REPO_ROOT,
  script,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";

const server = useModelServer();
const NAMES = ["alpha", "beta", "gamma"] as const;
const answerOf = (name: string) => `ANSWER OF ${name.toUpperCase()} 4711`;

/** Whether this Pi has codemode (its own extension file), not which version it is. */
const HAS_CODEMODE = existsSync(join(dirname(PI_CLI_PATH), "extensions", "codemode", "index.js"));

/** The launch script: three delegates; it returns what each call resolved to. */
const LAUNCH = `
const receipts = [];
for (const name of ${JSON.stringify(NAMES)}) {
  const prompt = "Answer for " + name + ". " + ${JSON.stringify(Object.fromEntries(NAMES.map((n) => [n, script({ text: answerOf(n), delayMs: 300 })])))}[name];
  receipts.push(await tools.bg_delegate({ name, prompt }));
}
return JSON.stringify({ LAUNCHED: receipts });
`;

/** The retrieval script: every id, read back as objects. */
function retrieve(ids: readonly string[]): string {
  return `
const results = [];
for (const taskId of ${JSON.stringify(ids)}) results.push(await tools.bg_result({ taskId }));
return JSON.stringify({ RESULTS: results });
`;
}

/** The JSON a script returned, found in a tool result's text by its marker key. */
function scriptValue<T>(text: string, key: string): T | undefined {
  const at = text.indexOf(`{"${key}":`);
  if (at === -1) return undefined;
  for (let end = text.length; end > at; end--) {
    try {
      return (JSON.parse(text.slice(at, end)) as Record<string, T>)[key];
    } catch {
      // not yet the whole value
    }
  }
  return undefined;
}

interface Launched {
  id: string;
  kind: string;
  name: string;
  started: boolean;
  state: string;
  routes: { provider: string; model: string }[];
}
interface Result {
  id: string;
  state: string;
  verified: boolean;
  answer: string | null;
  answer_bytes: number | null;
}

/** "go" → the launch script; the third notice → the retrieval script; its result → a final line. */
function driveParent(seen: { launched?: Launched[]; results?: Result[] }): void {
  server.setHandler((req) => {
    if (isChildRequest(req)) return undefined;
    const last = req.messages.at(-1);
    if (last?.role === "user" && last.text === "go")
      return { toolCalls: [{ name: "codemode", args: { code: LAUNCH } }] };
    if (last?.role === "tool") {
      const results = scriptValue<Result[]>(last.text, "RESULTS");
      if (results !== undefined) {
        seen.results = results;
        return { text: `FINAL ${results.map((r) => r.answer?.trim()).join(" | ")}` };
      }
      const launched = scriptValue<Launched[]>(last.text, "LAUNCHED");
      if (launched !== undefined) seen.launched = launched;
      return { text: "Launched; waiting." };
    }
    const notices = req.messages.filter(
      (m) => m.role === "user" && /Background delegate d[0-9a-f]{32} \(\w+\) completed/.test(m.text),
    ).length;
    if (notices >= NAMES.length && seen.launched !== undefined && seen.results === undefined) {
      return { toolCalls: [{ name: "codemode", args: { code: retrieve(seen.launched.map((r) => r.id)) } }] };
    }
    return { text: "noted" };
  });
}

async function runPi(agent: AgentDir, cwd: string) {
  return execa(
    process.execPath,
    [
      PI_CLI_PATH,
      "-e",
      REPO_ROOT,
      "--no-session",
      "--tools",
      "+codemode",
      "--provider",
      "fake",
      "--model",
      "fake-model",
      "-p",
      "go",
    ],
    {
      cwd,
      env: { PI_CODING_AGENT_DIR: agent.dir, PI_OFFLINE: "1", PI_TELEMETRY: "0", PATH: HOST.pathEnv() },
      stdin: "ignore",
      reject: false,
      timeout: 120_000,
    },
  );
}

describe.runIf(HAS_CODEMODE)(`a codemode script on pi ${HOST.version} reads the tools' results as objects`, () => {
  for (const mode of ["on", "only"] as const) {
    it(`mode ${mode}: three delegates launched from one script, their verified answers read back as objects`, async () => {
      const agent = await createAgentDir({ serverUrl: server.url, settings: { codemode: { mode } } });
      const cwd = await makeTempDir(`codemode-${mode}`);
      const seen: { launched?: Launched[]; results?: Result[] } = {};
      driveParent(seen);
      const run = await runPi(agent, cwd);
      expect(run.exitCode, run.stderr).toBe(0);
      // The launch script got receipts as objects: ids, kinds, routes — no prose to parse.
      expect(seen.launched?.map((r) => r.name)).toEqual([...NAMES]);
      for (const receipt of seen.launched ?? []) {
        expect(receipt).toMatchObject({ kind: "delegate", started: true, state: "running" });
        expect(receipt.id).toMatch(/^d[0-9a-f]{32}$/);
        expect(receipt.routes).toEqual([{ provider: "fake", model: "fake-model" }]);
      }
      // The retrieval script got each verified answer as an object.
      expect(seen.results?.map((r) => r.id)).toEqual(seen.launched?.map((r) => r.id));
      for (const [i, result] of (seen.results ?? []).entries()) {
        expect(result).toMatchObject({ state: "completed", verified: true });
        expect(result.answer?.trim()).toBe(answerOf(NAMES[i] as string));
        expect(result.answer_bytes).toBe(Buffer.byteLength(result.answer ?? ""));
      }
      expect(run.stdout.trim().split("\n").at(-1)).toBe(`FINAL ${NAMES.map(answerOf).join(" | ")}`);
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    });
  }
});

/** The steering script: one delegate launched, then steered, from one script; both results as objects. */
const STEER_LAUNCH = `
const receipt = await tools.bg_delegate({ name: "steered", prompt: "Find the bug. CODEMODE-STEER" });
const steer = await tools.bg_steer({ taskId: receipt.id, message: "The bug is in the v2 API." });
return JSON.stringify({ STEER: { receipt, steer } });
`;
const STEERED_ANSWER = "STEERED BY SCRIPT 2718";

interface Steer {
  id: string;
  n: number;
  state: string;
  delivered: { n: number; request: number }[];
  queued: number[];
  remaining: number;
}

describe.runIf(HAS_CODEMODE)(`a codemode script on pi ${HOST.version} steers a running delegate`, () => {
  for (const mode of ["on", "only"] as const) {
    it(`mode ${mode}: bg_steer's result is an object; the answer read back took the message into account`, async () => {
      const agent = await createAgentDir({ serverUrl: server.url, settings: { codemode: { mode } } });
      const cwd = await makeTempDir(`codemode-steer-${mode}`);
      let released: () => void = () => {};
      const scriptDone = new Promise<void>((resolve) => {
        released = resolve;
      });
      const seen: { steer?: { receipt: Launched; steer: Steer }; results?: Result[] } = {};
      server.setHandler(async (req) => {
        if (isChildRequest(req)) {
          if (req.messages.some((m) => m.role === "user" && m.text.includes("[Steering message 1"))) {
            return { text: STEERED_ANSWER };
          }
          await scriptDone; // the child is not answered before the script has steered it
          return { toolCalls: [{ name: "ls", args: { path: "." } }] };
        }
        const last = req.messages.at(-1);
        if (last?.role === "user" && last.text === "go") {
          return { toolCalls: [{ name: "codemode", args: { code: STEER_LAUNCH } }] };
        }
        if (last?.role === "tool") {
          const results = scriptValue<Result[]>(last.text, "RESULTS");
          if (results !== undefined) {
            seen.results = results;
            return { text: `FINAL ${results.map((r) => r.answer?.trim()).join(" | ")}` };
          }
          const steered = scriptValue<{ receipt: Launched; steer: Steer }>(last.text, "STEER");
          if (steered !== undefined) seen.steer = steered;
          released();
          return { text: "Steered; waiting." };
        }
        const noticed = req.messages.some(
          (m) => m.role === "user" && /Background delegate d[0-9a-f]{32} \(steered\) completed/.test(m.text),
        );
        if (noticed && seen.steer !== undefined && seen.results === undefined) {
          return { toolCalls: [{ name: "codemode", args: { code: retrieve([seen.steer.receipt.id]) } }] };
        }
        return { text: "noted" };
      });
      try {
        const run = await runPi(agent, cwd);
        expect(run.exitCode, run.stderr).toBe(0);
        expect(seen.steer?.steer).toEqual({
          id: seen.steer?.receipt.id,
          n: 1,
          state: "queued",
          delivered: [],
          queued: [1],
          remaining: 7,
        });
        expect(seen.results?.[0]).toMatchObject({ state: "completed", verified: true });
        expect(run.stdout.trim().split("\n").at(-1)).toBe(`FINAL ${STEERED_ANSWER}`);
      } finally {
        released();
      }
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    });
  }
});
