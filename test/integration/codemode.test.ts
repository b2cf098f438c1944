/**
 * Structured results for scripts (docs/tools/bg_result.md, "Structured results for scripts"): on a Pi
 * with codemode, a `pi -p` parent's script launches three delegates, waits for their notices and
 * reads the three verified answers as objects — in codemode's modes `on` and `only`; the same three
 * launched as one group wake the parent once, and a later script reads every member's answer from
 * one bg_result on the group id, while the codemode rows record each nested call as Pi draws them;
 * a script steers the delegate it launched and reads bg_steer's result as an object. Real parents,
 * real children, the scripted model.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { isChildRequest, type Notice, notifications, sessionFileIn } from "../helpers/drive.ts";
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

/** The launch script: three delegates (`more` first in each call's arguments); it returns what each call resolved to. */
function launch(more: Record<string, unknown> = {}): string {
  return `
const receipts = [];
for (const name of ${JSON.stringify(NAMES)}) {
  const prompt = "Answer for " + name + ". " + ${JSON.stringify(Object.fromEntries(NAMES.map((n) => [n, script({ text: answerOf(n), delayMs: 300 })])))}[name];
  receipts.push(await tools.bg_delegate({ ...${JSON.stringify(more)}, name, prompt }));
}
return JSON.stringify({ LAUNCHED: receipts });
`;
}

/**
 * The retrieval script: every id read back as objects, and the answers it read from them (a group's:
 * each member's, `members[i].answer`).
 */
function retrieve(ids: readonly string[]): string {
  return `
const results = [];
for (const taskId of ${JSON.stringify(ids)}) results.push(await tools.bg_result({ taskId }));
const answers = [];
for (const result of results) {
  const each = result.kind === "group" ? result.members : [result];
  for (let i = 0; i < each.length; i++) answers.push(each[i].answer.trim());
}
return JSON.stringify({ RESULTS: results, ANSWERS: answers });
`;
}

/** The object a script returned, found in a tool result's text by its first key. */
function scriptObject(text: string, firstKey: string): Record<string, unknown> | undefined {
  const at = text.indexOf(`{"${firstKey}":`);
  if (at === -1) return undefined;
  for (let end = text.length; end > at; end--) {
    try {
      return JSON.parse(text.slice(at, end)) as Record<string, unknown>;
    } catch {
      // not yet the whole value
    }
  }
  return undefined;
}

/** The JSON a script returned under its first key. */
function scriptValue<T>(text: string, key: string): T | undefined {
  return scriptObject(text, key)?.[key] as T | undefined;
}

interface Launched {
  id: string;
  kind: string;
  name: string;
  started: boolean;
  state: string;
  routes: { provider: string; model: string }[];
  group: { id: string; name: string } | null;
}
interface Result {
  id: string;
  kind: string;
  state: string;
  verified: boolean;
  answer: string | null;
  answer_bytes: number | null;
  /** A group's members (bg_result on a group id). */
  members?: (Result & { name: string })[];
}
interface Seen {
  launched?: Launched[];
  results?: Result[];
}

/** A delegate's own completion notice, as the model reads it. */
const DELEGATE_NOTICE = /Background delegate d[0-9a-f]{32} \(\w+\) completed/;

/**
 * "go" → the launch script; `notices` notices matching `notice` → the retrieval script for what was
 * launched; its result → a final line with the answers the script read.
 */
function driveParent(
  seen: Seen,
  {
    code,
    notice,
    notices,
    retrieval,
  }: { code: string; notice: RegExp; notices: number; retrieval: (launched: Launched[]) => string },
): void {
  server.setHandler((req) => {
    if (isChildRequest(req)) return undefined;
    const last = req.messages.at(-1);
    if (last?.role === "user" && last.text === "go") return { toolCalls: [{ name: "codemode", args: { code } }] };
    if (last?.role === "tool") {
      const read = scriptObject(last.text, "RESULTS");
      if (read !== undefined) {
        seen.results = read.RESULTS as Result[];
        return { text: `FINAL ${(read.ANSWERS as string[]).join(" | ")}` };
      }
      const launched = scriptValue<Launched[]>(last.text, "LAUNCHED");
      if (launched !== undefined) seen.launched = launched;
      return { text: "Launched; waiting." };
    }
    const noticed = req.messages.filter((m) => m.role === "user" && notice.test(m.text)).length;
    if (noticed >= notices && seen.launched !== undefined && seen.results === undefined) {
      return { toolCalls: [{ name: "codemode", args: { code: retrieval(seen.launched) } }] };
    }
    return { text: "noted" };
  });
}

/** `pi -p go` with codemode and this package; with `sessionDir` it keeps its session there. */
async function runPi(agent: AgentDir, cwd: string, sessionDir?: string) {
  return execa(
    process.execPath,
    [
      PI_CLI_PATH,
      "-e",
      REPO_ROOT,
      ...(sessionDir === undefined ? ["--no-session"] : ["--session-dir", sessionDir]),
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

/** An agent dir with codemode in `mode` and a fresh project. */
async function codemodeProject(mode: "on" | "only", label: string): Promise<{ agent: AgentDir; cwd: string }> {
  const agent = await createAgentDir({ serverUrl: server.url, settings: { codemode: { mode } } });
  return { agent, cwd: await makeTempDir(`${label}-${mode}`) };
}

describe.runIf(HAS_CODEMODE)(`a codemode script on pi ${HOST.version} reads the tools' results as objects`, () => {
  for (const mode of ["on", "only"] as const) {
    it(`mode ${mode}: three delegates launched from one script, their verified answers read back as objects`, async () => {
      const { agent, cwd } = await codemodeProject(mode, "codemode");
      const seen: Seen = {};
      driveParent(seen, {
        code: launch(),
        notice: DELEGATE_NOTICE,
        notices: NAMES.length,
        retrieval: (launched) => retrieve(launched.map((r) => r.id)),
      });
      const run = await runPi(agent, cwd);
      expect(run.exitCode, run.stderr).toBe(0);
      // The launch script got receipts as objects: ids, kinds, routes — no prose to parse.
      expect(seen.launched?.map((r) => r.name)).toEqual([...NAMES]);
      for (const receipt of seen.launched ?? []) {
        expect(receipt).toMatchObject({ kind: "delegate", started: true, state: "running", group: null });
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

/** A session file's messages, custom messages (the notices) as Pi hands them to extensions. */
function sessionMessages(dir: string): Record<string, unknown>[] {
  const entries = readFileSync(sessionFileIn(dir), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return entries.flatMap((e) => {
    if (e.type === "message") return [e.message as Record<string, unknown>];
    if (e.type === "custom_message") return [{ ...e, role: "custom" }];
    return [];
  });
}

/** A nested call as the codemode row records it, and as Pi draws it under the script. */
interface NestedCall {
  name: string;
  args: string;
  status: string;
}

/** The group's notice, as the model reads it. */
const GROUP_NOTICE = /Background group "fan" g[0-9a-f]{32}: 3 members ended \(3 completed\)/;

describe.runIf(HAS_CODEMODE)(`a codemode script on pi ${HOST.version} fans out to a group`, () => {
  for (const mode of ["on", "only"] as const) {
    it(`mode ${mode}: three grouped delegates from one script, one notice, one bg_result with every member's answer as objects`, async () => {
      const { agent, cwd } = await codemodeProject(mode, "codemode-group");
      const sessions = await makeTempDir(`codemode-group-sessions-${mode}`);
      const seen: Seen = {};
      driveParent(seen, {
        code: launch({ group: "fan" }),
        notice: GROUP_NOTICE,
        notices: 1,
        // Every id the receipts named as their group's: one, if the group holds.
        retrieval: (launched) => retrieve([...new Set(launched.map((r) => r.group?.id ?? "no group"))]),
      });
      const run = await runPi(agent, cwd, sessions);
      expect(run.exitCode, run.stderr).toBe(0);
      // Each receipt names the same group.
      expect(seen.launched?.map((r) => r.name)).toEqual([...NAMES]);
      const groupId = seen.launched?.[0]?.group?.id;
      expect(groupId).toMatch(/^g[0-9a-f]{32}$/);
      for (const receipt of seen.launched ?? []) {
        expect(receipt).toMatchObject({ kind: "delegate", started: true, group: { id: groupId, name: "fan" } });
      }
      const ids = seen.launched?.map((r) => r.id);

      // One notice, the group's, listing the three; none of the members' own, in the session or the model's view.
      const messages = sessionMessages(sessions);
      const notices = notifications(messages) as unknown as Notice[];
      expect(notices).toHaveLength(1);
      expect(notices[0]?.details).toMatchObject({ kind: "group", taskId: groupId, name: "fan" });
      // The notice lists the members as they ended (bg_result lists them oldest first).
      const members = notices[0]?.details.members as { taskId: string; name: string; state: string }[];
      expect(members.map((m) => `${m.taskId} ${m.name} ${m.state}`).sort()).toEqual(
        NAMES.map((name, i) => `${ids?.[i]} ${name} completed`).sort(),
      );
      const parentRequests = server.requests.filter((r) => !isChildRequest(r));
      expect(parentRequests.some((r) => r.messages.some((m) => DELEGATE_NOTICE.test(m.text)))).toBe(false);

      // One bg_result on the group id: the group ended, every member verified, each answer as an object.
      expect(seen.results).toHaveLength(1);
      const group = seen.results?.[0];
      expect(group).toMatchObject({ id: groupId, kind: "group", state: "ended", verified: true });
      expect(group?.members?.map((m) => [m.id, m.kind, m.name, m.state, m.verified])).toEqual(
        NAMES.map((name, i) => [ids?.[i], "delegate", name, "completed", true]),
      );
      for (const [i, member] of (group?.members ?? []).entries()) {
        expect(member.answer?.trim()).toBe(answerOf(NAMES[i] as string));
        expect(member.answer_bytes).toBe(Buffer.byteLength(member.answer ?? ""));
      }
      // What the script read from members[i].answer is the three distinct answers.
      expect(run.stdout.trim().split("\n").at(-1)).toBe(`FINAL ${NAMES.map(answerOf).join(" | ")}`);

      // The person's screen: each codemode row lists its nested calls (Pi draws no other row for them).
      const rows = messages
        .filter((m) => m.role === "toolResult" && m.toolName === "codemode")
        .map((m) => (m.details as { calls: NestedCall[] }).calls);
      expect(rows.map((calls) => calls.map((c) => [c.name, c.status]))).toEqual([
        NAMES.map(() => ["bg_delegate", "ok"]),
        [["bg_result", "ok"]],
      ]);
      for (const [i, call] of (rows[0] ?? []).entries()) {
        expect(call.args).toContain(`"name":"${NAMES[i]}"`);
        expect(call.args).toContain(`"group":"fan"`);
      }
      expect(rows[1]?.[0]?.args).toBe(JSON.stringify({ taskId: groupId }));
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
      const { agent, cwd } = await codemodeProject(mode, "codemode-steer");
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
