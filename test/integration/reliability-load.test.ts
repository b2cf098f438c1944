/**
 * Reliability, load: three rounds of 8 concurrent delegates from one real in-process pi parent
 * (maxRunning raised to 8 through PI_BG_DELEGATE_MAX_RUNNING for the parent's lifetime). Each
 * round's children are held at the model server until all 8 are waiting, so they really run at
 * once; a ninth launch then is refused with delegate_concurrency_limit and creates nothing. Every
 * child answers its own distinct text; every answer is verified through bg_result and matched to
 * its task: none lost, none duplicated, none swapped. Session shutdown then leaves no child process.
 *
 * 24 pi children on a 2-core machine: this file is deliberately the only load test.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_RUNNING_ENV } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import {
  CHILD_FENCE,
  call,
  gate,
  installParentDriver,
  isChildRequest,
  lastToolResult,
  notifications,
  promptWhenIdle,
  taskIdOf,
  toolResults,
  until,
} from "../helpers/drive.ts";
import {
  findProcesses,
  type ModelRequest,
  makeTempDir,
  type SdkParent,
  startSdkParent,
  useAgentDir,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";
import { listTree, readJson, taskDirs } from "./launch-support.ts";

const ROUNDS = 3;
const WIDTH = 8;

const server = useModelServer({ resetBetweenTests: false });
const agent = useAgentDir(server);

/** The token in a child's DIRECTIVE block (the background after it quotes earlier tokens too). */
function tokenOf(request: ModelRequest): string {
  const prompt = request.messages.find((m) => m.role === "user" && m.text.includes(CHILD_FENCE))?.text ?? "";
  const token = /LOAD-TOKEN (r\d+-t\d+)/.exec(prompt.slice(prompt.indexOf(CHILD_FENCE)))?.[1];
  if (token === undefined) throw new Error("a child request without a LOAD-TOKEN in its directive");
  return token;
}

/** The distinct answer each task's child gives. */
function answerFor(token: string): string {
  return `Answer of ${token}: ${sha256Hex(`load ${token}`)}`;
}

interface Note {
  details: { taskId: string; state: string; code: string | null; answer_sha256: string | null };
}

describe("load", () => {
  it("3 rounds of 8 concurrent delegates: all verified, none lost or duplicated; a ninth is refused; shutdown leaves nothing", async () => {
    const previous = process.env[MAX_RUNNING_ENV];
    process.env[MAX_RUNNING_ENV] = String(WIDTH);
    const cwd = await makeTempDir("rel-load");
    // Child requests wait on the gate of the round they arrived in; `waiting` counts them per round.
    let round = gate();
    const waiting = new Map<number, string[]>();
    let currentRound = 0;
    installParentDriver(server, async (request) => {
      const token = tokenOf(request);
      const mine = round;
      const list = waiting.get(currentRound) ?? [];
      list.push(token);
      waiting.set(currentRound, list);
      await mine.wait;
      return { text: answerFor(token) };
    });
    let parent: SdkParent | undefined;
    const seen = new Map<string, string>(); // task id → token
    try {
      parent = await startSdkParent({ agentDir: agent, cwd });
      for (let r = 1; r <= ROUNDS; r++) {
        currentRound = r;
        round = gate();
        const ids: [string, string][] = [];
        for (let i = 0; i < WIDTH; i++) {
          const token = `r${r}-t${i}`;
          await promptWhenIdle(
            parent,
            call("bg_delegate", { name: `load ${token}`, prompt: `Reply with your token. LOAD-TOKEN ${token}` }),
          );
          const receipt = lastToolResult(parent.messages(), "bg_delegate");
          expect(receipt.isError, receipt.text).toBe(false);
          ids.push([taskIdOf(receipt.text), token]);
        }
        await until(
          () => (waiting.get(r) ?? []).length === WIDTH,
          `round ${r}: all ${WIDTH} children waiting`,
          120_000,
        );
        // All 8 are running at once: each manifest says so and each child pid is alive.
        const live = await findProcesses(agent.dir, { includeEnv: true });
        for (const [id] of ids) {
          const manifest = readJson(join(taskDirs(cwd).find((d) => d.endsWith(id)) ?? "", "manifest.json"));
          expect(manifest.state).toBe("running");
          expect(live.map((p) => p.pid)).toContain((manifest.child as { pid: number }).pid);
        }

        if (r === 1) {
          const treeBefore = listTree(join(cwd, ".pi"));
          const requestsBefore = server.requests.filter(isChildRequest).length;
          await promptWhenIdle(
            parent,
            call("bg_delegate", { name: "the ninth", prompt: "Reply with your token. LOAD-TOKEN r1-t8" }),
          );
          const refused = lastToolResult(parent.messages(), "bg_delegate");
          expect(refused.isError).toBe(true);
          const lines = refused.text.split("\n");
          expect(lines[0]).toMatch(/^\[delegate_concurrency_limit\] /);
          expect(lines[0]).toContain(`(maxRunning ${WIDTH})`);
          expect(lines).toContain("Child process created: no");
          expect(listTree(join(cwd, ".pi"))).toEqual(treeBefore);
          expect(taskDirs(cwd)).toHaveLength(WIDTH);
          expect(server.requests.filter(isChildRequest)).toHaveLength(requestsBefore);
          expect((await findProcesses(agent.dir, { includeEnv: true })).length).toBe(live.length);
        }

        round.release();
        for (const [id, token] of ids) {
          await until(
            () => (notifications(parent?.messages() ?? []) as Note[]).some((n) => n.details.taskId === id),
            `the notification of ${token}`,
            120_000,
          );
        }
        await parent.waitForIdle(60_000);
        for (const [id, token] of ids) {
          const notes = (notifications(parent.messages()) as Note[]).filter((n) => n.details.taskId === id);
          expect(notes).toHaveLength(1);
          expect(notes[0]?.details.state).toBe("completed");
          expect(notes[0]?.details.answer_sha256).toBe(sha256Hex(answerFor(token)));
          // bg_result verifies result.json again and returns this task's own text, no other's.
          const before = toolResults(parent.messages(), "bg_result").length;
          await promptWhenIdle(parent, call("bg_result", { taskId: id }));
          const results = toolResults(parent.messages(), "bg_result");
          expect(results).toHaveLength(before + 1);
          const fetched = results.at(-1) as (typeof results)[number];
          expect(fetched.isError, fetched.text).toBe(false);
          expect(fetched.text).toContain(answerFor(token));
          expect(fetched.text.match(/Answer of r\d+-t\d+/g)).toEqual([`Answer of ${token}`]);
          const answer = (fetched.details as { answer: { sha256: string } }).answer;
          expect(answer.sha256).toBe(sha256Hex(answerFor(token)));
          seen.set(id, token);
        }
      }

      // None lost, none duplicated: 24 tasks, 24 dirs, 24 child requests, one per token, in 3 rounds of 8.
      expect(seen.size).toBe(ROUNDS * WIDTH);
      expect(new Set(seen.values()).size).toBe(ROUNDS * WIDTH);
      expect(taskDirs(cwd)).toHaveLength(ROUNDS * WIDTH);
      const tokens = server.requests.filter(isChildRequest).map(tokenOf);
      expect(tokens.sort()).toEqual([...seen.values()].sort());
      for (let r = 1; r <= ROUNDS; r++) expect(waiting.get(r)).toHaveLength(WIDTH);
      expect(notifications(parent.messages())).toHaveLength(ROUNDS * WIDTH);
      expect(server.errors).toEqual([]);
      expect(parent.extensionErrors).toEqual([]);

      await parent.dispose();
      parent = undefined;
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    } finally {
      round.release();
      await parent?.dispose();
      if (previous === undefined) delete process.env[MAX_RUNNING_ENV];
      else process.env[MAX_RUNNING_ENV] = previous;
    }
  }, 600_000);
});
