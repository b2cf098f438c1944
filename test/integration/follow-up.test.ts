/**
 * Follow-ups and continuations of a delegate (docs/tools/bg_delegate.md, "Follow-ups") with real
 * children: the follow-up's child resumes the previous child's session, the scripted model sees the
 * earlier tool results in its request, and bg_result verifies the follow-up and its link.
 */
import { appendFileSync, cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/core/hash.ts";
import type { DelegateManifest, DelegateResultFile } from "../../src/core/types.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  call,
  delegateVia,
  followUpVia,
  installHoldingDriver,
  installParentDriver,
  isChildRequest,
  lastToolResult,
  noticeOf,
  promptWhenIdle,
  until,
} from "../helpers/drive.ts";
import { fusionProject, fusionVia, HELD_RUN_ARGS } from "../helpers/fusion-run-driver.ts";
import { drivenSdkParent, freshProject, taskDirOf } from "../helpers/held-project.ts";
import type { ModelRequest } from "../helpers/model-server.ts";
import { type SdkParent, script, useModelServer, withSdkParent } from "../helpers/pi-parent.ts";

const server = useModelServer();

const MARKER = "the retry budget lives in src/retry.ts and is 7 attempts";

const RETRY_SOURCE = { "src/retry.ts": `// ${MARKER}\nexport const RETRIES = 7;\n` };

function startParent(label: string) {
  return drivenSdkParent(server, label, RETRY_SOURCE);
}

/** A project holding RETRY_SOURCE with a parent driven by instruction for `body`, disposed after it. */
async function withParent(label: string, body: (parent: SdkParent, cwd: string) => Promise<void>): Promise<void> {
  const { agentDir, cwd } = await freshProject(server, label, RETRY_SOURCE);
  installParentDriver(server);
  await withSdkParent({ agentDir, cwd }, (parent) => body(parent, cwd));
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

/** The child requests whose last user message carries `marker`. */
function childRequestsFor(marker: string): ModelRequest[] {
  return server.requests.filter(
    (r) => isChildRequest(r) && r.messages.some((m) => m.role === "user" && m.text.includes(marker)),
  );
}

/** A first delegate that reads src/retry.ts once and answers; returns its id once it has ended. */
async function firstTask(parent: SdkParent): Promise<string> {
  const id = await delegateVia(parent, {
    name: "find retries",
    prompt: `Where is the retry budget? FIRST-TASK ${script({ tool: "read", args: { path: "src/retry.ts" } }, { text: "It is in src/retry.ts:1 (7 attempts)." })}`,
  });
  await noticeOf(parent, id);
  await parent.waitForIdle();
  return id;
}

/** Every task dir under the project's .pi/delegate (sessions, then tasks). */
function taskDirs(cwd: string): string[] {
  const root = join(cwd, ".pi/delegate");
  const list = (dir: string) => {
    try {
      return readdirSync(dir).map((name) => join(dir, name));
    } catch {
      return [];
    }
  };
  return list(root).flatMap(list).sort();
}

/** bg_delegate through the parent, expected to be refused: the refusal's text. */
async function refusedVia(parent: SdkParent, args: Record<string, unknown>): Promise<string> {
  await promptWhenIdle(parent, call("bg_delegate", args));
  const result = lastToolResult(parent.messages(), "bg_delegate");
  expect(result.isError).toBe(true);
  return result.text;
}

/** A refusal with `code` that creates nothing: no task dir appears. */
async function expectRefused(parent: SdkParent, cwd: string, args: Record<string, unknown>, code: string) {
  const before = taskDirs(cwd);
  const text = await refusedVia(parent, args);
  expect(text).toMatch(new RegExp(`^\\[${code}\\]`));
  expect(taskDirs(cwd)).toEqual(before);
  return text;
}

describe("follow-ups of a delegate", () => {
  it("answers from the previous child's reads without reading again, and bg_result verifies the chain", async () => {
    await withParent("follow-up", async (parent, cwd) => {
      const first = await firstTask(parent);
      const firstDir = taskDirOf(cwd, parent, first);
      const firstResult = readJson<DelegateResultFile>(join(firstDir, "result.json"));
      const firstSession = readFileSync(join(firstDir, "child-session/session.jsonl"));
      expect(firstResult.session_sha256).toBe(sha256Hex(firstSession));

      const second = await delegateVia(parent, {
        name: "ask again",
        previousTaskId: first,
        prompt: `And how many attempts? FOLLOW-UP ${script({ text: "Seven, as read before: src/retry.ts:1." })}`,
      });
      await noticeOf(parent, second);
      await parent.waitForIdle();

      // The follow-up's child saw the earlier read's tool result in its very first request.
      const asked = childRequestsFor("FOLLOW-UP");
      expect(asked.length).toBe(1);
      const seen = asked[0]!.messages;
      expect(seen.some((m) => m.role === "tool" && m.text.includes(MARKER))).toBe(true);
      expect(seen.some((m) => m.role === "assistant" && m.text.includes("It is in src/retry.ts:1"))).toBe(true);
      expect(seen.at(-1)?.text).toContain(`pi-bg-delegate follow-up ${second} of task ${first}`);
      expect(seen.at(-1)?.text).not.toContain("<<<BACKGROUND");
      // Same route: the follow-up's first request starts with the previous child's last request, byte
      // for byte (system prompt, tools, messages), then its answer: a provider's prompt cache applies.
      const previousLast = childRequestsFor("FIRST-TASK")
        .filter((r) => !r.messages.some((m) => m.text.includes("FOLLOW-UP")))
        .at(-1)!;
      const firstOfFollowUp = asked[0]!;
      expect(firstOfFollowUp.systemPrompt).toBe(previousLast.systemPrompt);
      expect(JSON.stringify(firstOfFollowUp.raw.tools)).toBe(JSON.stringify(previousLast.raw.tools));
      const before = previousLast.raw.messages as unknown[];
      const now = firstOfFollowUp.raw.messages as unknown[];
      expect(JSON.stringify(now.slice(0, before.length))).toBe(JSON.stringify(before));

      const secondDir = taskDirOf(cwd, parent, second);
      const manifest = readJson<DelegateManifest>(join(secondDir, "manifest.json"));
      const result = readJson<DelegateResultFile>(join(secondDir, "result.json"));
      expect(result.tool_calls).toBe(0);
      const link = {
        previous_task_id: first,
        previous_result_sha256: sha256Hex(readFileSync(join(firstDir, "result.json"))),
        previous_session_sha256: sha256Hex(firstSession),
      };
      expect(result.previous).toEqual(link);
      expect(manifest.follow_up).toMatchObject({ ...link, chain_position: 2, previous_end: "completed" });
      expect(manifest.route).toEqual({ provider: "fake", model: "fake-model" });

      const view = await bgResultVia(parent, { taskId: second });
      expect(view.isError).toBe(false);
      expect(view.text).toContain(`follow-up of ${first} (2nd in chain)`);
      expect(view.text).toContain("Seven, as read before");
      // The earlier read counts for the follow-up's citation.
      expect(view.text).toContain("1 evidence row carried");
      expect(view.details?.evidence_check).toMatchObject({
        freshness: { state: "fresh" },
        citations: { total: 1, read: 1 },
      });

      // A person sees the chain: list puts the follow-up under its previous task, show prints it whole.
      const list = await runCli(cwd, "list", "--all");
      expect(list.code).toBe(0);
      const lines = list.stdout.split("\n");
      const at = lines.findIndex((l) => l.startsWith(first));
      expect(lines[at + 1]).toMatch(new RegExp(`^${second}.*└ ask again$`));
      const show = await runCli(cwd, "show", second);
      expect(show.stdout).toContain(`1. ${first} completed → 2. ${second} completed (link intact) [this task]`);

      // prune keeps the tree a kept follow-up resumes from, unless asked to unlink it. (The first
      // answer is read here, so the link is what keeps it, not an unread answer.)
      expect((await bgResultVia(parent, { taskId: first })).isError).toBe(false);
      const kept = await runCli(cwd, "prune", "--keep", "1");
      expect(kept.stdout).toContain(`Kept ${first}: a kept follow-up resumes from it`);
      expect(readdirSync(firstDir)).toContain("result.json");
      const unlinked = await runCli(cwd, "prune", "--keep", "1", "--unlink");
      expect(unlinked.code).toBe(0);
      expect(taskDirs(cwd)).toEqual([secondDir]);
      const gone = await bgResultVia(parent, { taskId: second });
      expect(gone.isError).toBe(false);
      expect(gone.text).toContain(`follow-up of ${first} (2nd in chain); link gone`);
      const showGone = await runCli(cwd, "show", second);
      expect(showGone.stdout).toContain(`1. ${first} gone → 2. ${second} completed (link GONE) [this task]`);
    });
  });

  it("follows up on another route and with its own outputSchema, and reports a previous tree changed or removed after the follow-up started", async () => {
    await withParent("follow-up-route", async (parent, cwd) => {
      const first = await firstTask(parent);
      const second = await delegateVia(parent, {
        name: "cheaper question",
        previousTaskId: first.slice(0, 12),
        route: { provider: "fake", model: "big-model" },
        prompt: `Quick one. ROUTE-FOLLOW-UP ${script({ text: "Seven: src/retry.ts:1." })}`,
      });
      await noticeOf(parent, second);
      await parent.waitForIdle();
      const asked = childRequestsFor("ROUTE-FOLLOW-UP");
      expect(asked.map((r) => r.model)).toEqual(["big-model"]);
      expect(asked[0]!.messages.some((m) => m.role === "tool" && m.text.includes(MARKER))).toBe(true);
      const intact = await bgResultVia(parent, { taskId: second });
      expect(intact.isError).toBe(false);
      expect(intact.details?.route).toEqual({ provider: "fake", model: "big-model" });
      expect(intact.text).toContain("link intact");

      // outputSchema is the follow-up's own: a structured answer whose basis cites the earlier read.
      const answer = {
        output: { retries: 7 },
        basis: [
          {
            field: "retries",
            citations: [{ path: "src/retry.ts", start_line: 2, end_line: 2, excerpt: "export const RETRIES = 7;" }],
            reasoning: "the constant read before",
            confidence: "high",
          },
        ],
      };
      const structured = await delegateVia(parent, {
        name: "as JSON",
        previousTaskId: first,
        outputSchema: {
          type: "object",
          additionalProperties: false,
          required: ["retries"],
          properties: { retries: { type: "integer" } },
        },
        prompt: `As JSON. STRUCTURED-FOLLOW-UP ${script({ text: JSON.stringify(answer) })}`,
      });
      await noticeOf(parent, structured);
      await parent.waitForIdle();
      expect(childRequestsFor("STRUCTURED-FOLLOW-UP")[0]!.messages.at(-1)?.text).toContain("<<<ANSWER FORMAT");
      const json = await bgResultVia(parent, { taskId: structured });
      expect(json.isError).toBe(false);
      expect(json.details?.output).toMatchObject({
        type: "json",
        content: { retries: 7 },
        basis: [{ field: "retries", status: "verified" }],
      });

      // The previous session changes after the follow-up started: reported, its reads not counted.
      const firstDir = taskDirOf(cwd, parent, first);
      appendFileSync(join(firstDir, "child-session/session.jsonl"), "\n");
      const changed = await bgResultVia(parent, { taskId: second });
      expect(changed.isError).toBe(false);
      expect(changed.text).toContain(`follow-up of ${first} (2nd in chain); link changed`);
      expect(changed.details?.follow_up).toMatchObject({ link: "changed", carried_evidence_rows: 0 });
      expect(changed.details?.evidence_check).toMatchObject({ citations: { total: 1, read: 0 } });

      rmSync(firstDir, { recursive: true });
      const gone = await bgResultVia(parent, { taskId: second });
      expect(gone.isError).toBe(false);
      expect(gone.details?.follow_up).toMatchObject({ link: "gone" });
      expect(gone.text).toContain("link gone");
    });
  });

  it("continues a turn-limited task to a verified answer that says it continues", async () => {
    await withParent("continuation", async (parent, cwd) => {
      const stopped = await delegateVia(parent, {
        name: "runs out of turns",
        maxTurns: 2,
        prompt: `Look everywhere. TURN-LIMITED ${script({ tool: "read", args: { path: "src/retry.ts" }, repeat: 5 })}`,
      });
      await noticeOf(parent, stopped);
      await parent.waitForIdle();
      const stoppedManifest = readJson<DelegateManifest>(join(taskDirOf(cwd, parent, stopped), "manifest.json"));
      expect(stoppedManifest.terminal?.code).toBe("child_turn_limit");

      const next = await delegateVia(parent, {
        name: "continue",
        previousTaskId: stopped,
        reseed: true,
        prompt: `continue ${script({ text: "Continuing the interrupted run: src/retry.ts:1 has 7 attempts." })}`,
      });
      await noticeOf(parent, next);
      await parent.waitForIdle();
      const asked = childRequestsFor("Continuing the interrupted run");
      expect(asked.length).toBe(1);
      expect(asked[0]!.messages.at(-1)?.text).toContain(
        `pi-bg-delegate continuation ${next} of task ${stopped}, which stopped before it answered (child_turn_limit)`,
      );
      expect(asked[0]!.messages.some((m) => m.role === "tool" && m.text.includes(MARKER))).toBe(true);
      // reseed: a fresh projection of the parent's conversation comes with the prompt, hash-accounted.
      const prompt = asked[0]!.messages.at(-1)!.text;
      expect(prompt).toContain("<<<BACKGROUND");
      expect(prompt).toContain("runs out of turns");
      const nextDir = taskDirOf(cwd, parent, next);
      const seed = readJson<{ projection: unknown; follow_up: { reseed: boolean }; child_prompt_sha256: string }>(
        join(nextDir, "seed.json"),
      );
      expect(seed.projection).not.toBeNull();
      expect(seed.follow_up.reseed).toBe(true);
      expect(seed.child_prompt_sha256).toBe(sha256Hex(readFileSync(join(nextDir, "child-prompt.txt"))));
      expect(readFileSync(join(nextDir, "child-prompt.txt"), "utf8")).toBe(prompt);
      const view = await bgResultVia(parent, { taskId: next });
      expect(view.isError).toBe(false);
      expect(view.text).toContain(`continuation (child_turn_limit) of ${stopped} (2nd in chain)`);
      // The stopped run's read counts for the continuation's citation.
      expect(view.text).toContain("1 evidence row carried");
      expect(view.details?.evidence_check).toMatchObject({ citations: { total: 1, read: 1 } });
      expect(view.text).toContain("Continuing the interrupted run");
      const manifest = readJson<DelegateManifest>(join(taskDirOf(cwd, parent, next), "manifest.json"));
      const stoppedTerminal = readFileSync(join(taskDirOf(cwd, parent, stopped), "child-terminal.json"));
      expect(manifest.follow_up).toMatchObject({
        previous_end: "child_turn_limit",
        previous_result_sha256: sha256Hex(stoppedTerminal),
      });
    });
  });

  it("refuses a follow-up of a tampered or failed task, typed, with nothing created", async () => {
    await withParent("follow-up-refusals", async (parent, cwd) => {
      const first = await firstTask(parent);
      const firstDir = taskDirOf(cwd, parent, first);
      const ask = (previousTaskId: string) => ({ name: "again", previousTaskId, prompt: "and?" });

      // The session file changed after the task ended.
      const sessionPath = join(firstDir, "child-session/session.jsonl");
      const session = readFileSync(sessionPath);
      appendFileSync(sessionPath, "\n");
      await expectRefused(parent, cwd, ask(first), "previous_session_mismatch");
      writeFileSync(sessionPath, session);

      // result.json rewritten: bg_result's own code.
      const resultPath = join(firstDir, "result.json");
      const result = readFileSync(resultPath);
      writeFileSync(resultPath, Buffer.concat([result, Buffer.from(" ")]));
      await expectRefused(parent, cwd, ask(first), "child_result_invalid");
      writeFileSync(resultPath, result);

      // reseed alone is not a follow-up.
      await expectRefused(parent, cwd, { name: "x", prompt: "y", reseed: true }, "invalid_arguments");
      await expectRefused(parent, cwd, ask("d0000"), "task_unknown");

      // A task that failed otherwise than by a limit or a cancel.
      const failed = await delegateVia(parent, {
        name: "fails",
        prompt: `Fail. PROVIDER-FAILS ${script({ error: 400, message: "bad request" })}`,
      });
      await noticeOf(parent, failed);
      await parent.waitForIdle();
      await expectRefused(parent, cwd, ask(failed), "previous_task_not_resumable");

      // Restored, the tree follows up again.
      await followUpVia(parent, first, "fine", `ok ${script({ text: "fine" })}`);
    });
  });

  it("refuses a follow-up of a running task and of a task of another project", async () => {
    const { cwd, parent } = await startParent("follow-up-running");
    const { held } = installHoldingDriver(server, "released answer");
    try {
      const running = await delegateVia(parent, { name: "held", prompt: "HOLD-UNTIL-RELEASED" });
      await until(() => server.requests.some((r) => isChildRequest(r)), "the held child at the model");
      await expectRefused(
        parent,
        cwd,
        { name: "again", previousTaskId: running, prompt: "and?" },
        "previous_task_running",
      );
      held.release();
      await noticeOf(parent, running);
      await parent.waitForIdle();

      // Its tree copied into another project is not that project's task.
      const { agentDir: otherAgent, cwd: other } = await freshProject(server, "follow-up-foreign");
      const sourceDir = taskDirOf(cwd, parent, running);
      await withSdkParent({ agentDir: otherAgent, cwd: other }, async (otherParent) => {
        cpSync(sourceDir, join(other, ".pi/delegate/copied", running), { recursive: true });
        await expectRefused(
          otherParent,
          other,
          { name: "again", previousTaskId: running, prompt: "and?" },
          "previous_task_foreign",
        );
      });
    } finally {
      held.release();
      await parent.dispose();
    }
  });
});

describe("follow-ups of a Fusion run", () => {
  it("are refused with their own code, before anything is created", async () => {
    const { agentDir, cwd } = await fusionProject(server, "follow-up-fusion");
    await withSdkParent({ agentDir, cwd }, async (parent) => {
      const runId = await fusionVia(parent, HELD_RUN_ARGS);
      const text = await expectRefused(
        parent,
        cwd,
        { name: "again", previousTaskId: runId, prompt: "and?" },
        "previous_task_fusion",
      );
      expect(text).toContain("out of scope");
      await noticeOf(parent, runId);
      await parent.waitForIdle();
    });
  });
});
