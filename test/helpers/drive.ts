/**
 * Drive a parent by instruction: a user prompt "CALL <tool> <json args>" makes the scripted parent
 * model call that tool once, then answer "ok"; anything else (a notification) gets "noted".
 * Child requests (recognised by the child prompt's DIRECTIVE fence) go to `child`, or fall through
 * to the child's own FAKE_SCRIPT.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { CHILD_SYSTEM_PROMPT } from "../../src/launch/prompt.ts";
import type { FakeReply, ModelRequest, ModelServer } from "./model-server.ts";

/** The fence around the delegated directive in the child's prompt. */
export const CHILD_FENCE = "<<<DIRECTIVE";

/** A request from a delegate child: pi puts the package-owned system prompt first (date and cwd follow). */
export function isChildRequest(request: ModelRequest): boolean {
  return request.systemPrompt.startsWith(CHILD_SYSTEM_PROMPT);
}

export function call(tool: string, args: unknown): string {
  return `CALL ${tool} ${JSON.stringify(args)}`;
}

export function installParentDriver(
  server: ModelServer,
  child?: (req: ModelRequest) => FakeReply | undefined | Promise<FakeReply | undefined>,
): void {
  server.setHandler((req) => {
    if (isChildRequest(req)) return child?.(req);
    const last = req.messages.at(-1);
    if (last?.role === "user") {
      const m = /^CALL (\w+) ([\s\S]*)$/.exec(last.text);
      if (m) return { toolCalls: [{ name: m[1] as string, args: JSON.parse(m[2] as string) }] };
      return { text: "noted" };
    }
    return { text: "ok" };
  });
}

/** A gate a held child request waits on; release() lets every waiting request through. */
export function gate(): { wait: Promise<void>; release: () => void } {
  let release = () => {};
  const wait = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { wait, release };
}

/**
 * installParentDriver with two held kinds of child: a prompt carrying HOLD-UNTIL-RELEASED answers
 * `releasedAnswer` once `held` is released; HOLD-FOREVER waits for `forever` (a test that never
 * releases it keeps a task running). Any other child answers from its own FAKE_SCRIPT.
 */
export function installHoldingDriver(
  server: ModelServer,
  releasedAnswer: string,
): { held: ReturnType<typeof gate>; forever: ReturnType<typeof gate> } {
  const held = gate();
  const forever = gate();
  installParentDriver(server, async (req) => {
    const text = req.messages.at(-1)?.text ?? "";
    // A later held child's prompt also carries an earlier one's (its seed), so FOREVER is matched first.
    if (text.includes("HOLD-FOREVER")) {
      await forever.wait;
      return { text: "never delivered" };
    }
    if (text.includes("HOLD-UNTIL-RELEASED")) {
      await held.wait;
      return { text: releasedAnswer };
    }
    return undefined;
  });
  return { held, forever };
}

interface ToolResultLike {
  role: string;
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  content?: { type: string; text?: string }[];
  details?: unknown;
}

/** One tool result as a test reads it. */
export interface ToolResultView {
  toolCallId: string;
  toolName: string;
  isError: boolean;
  text: string;
  details: Record<string, unknown> | undefined;
}

/** The parent's tool results in order, all of them or only `toolName`'s. */
export function toolResults(messages: readonly unknown[], toolName?: string): ToolResultView[] {
  return (messages as ToolResultLike[])
    .filter((m) => m.role === "toolResult" && (toolName === undefined || m.toolName === toolName))
    .map((m) => ({
      toolCallId: m.toolCallId ?? "",
      toolName: m.toolName ?? "",
      text: (m.content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join(""),
      isError: m.isError === true,
      details: m.details as Record<string, unknown> | undefined,
    }));
}

export function lastToolResult(messages: readonly unknown[], toolName: string) {
  const all = toolResults(messages, toolName);
  const last = all.at(-1);
  if (!last) throw new Error(`no ${toolName} result yet`);
  return last;
}

export function notifications(messages: readonly unknown[]) {
  return (messages as { role: string; customType?: string; content?: unknown; details?: unknown }[]).filter(
    (m) => m.role === "custom" && m.customType === "background-task-notification",
  );
}

/** A background-task notification as a test reads it. */
export interface Notice {
  content: string;
  details: Record<string, unknown>;
}

/** The notifications about task or run `taskId`, in order. */
export function noticesOf(messages: readonly unknown[], taskId: string): Notice[] {
  return notifications(messages).filter((n) => (n as Notice).details.taskId === taskId) as Notice[];
}

/** Wait for the first notification about `taskId` and return it. */
export async function noticeOf(
  parent: { messages(): readonly unknown[] },
  taskId: string,
  timeoutMs = 90_000,
): Promise<Notice> {
  await until(() => noticesOf(parent.messages(), taskId).length > 0, `the notice of ${taskId}`, timeoutMs);
  return noticesOf(parent.messages(), taskId)[0] as Notice;
}

/** The one session file a parent wrote into its session dir. */
export function sessionFileIn(dir: string): string {
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`expected one session file in ${dir}, found ${files.join(", ")}`);
  return join(dir, files[0] as string);
}

export function taskIdOf(receiptText: string): string {
  const id = /Delegate (d[0-9a-f]{32}) started/.exec(receiptText)?.[1];
  if (!id) throw new Error(`no task id in receipt: ${receiptText}`);
  return id;
}

/** Prompt once the parent is idle; a notification may start a turn at any moment, so retry then. */
export async function promptWhenIdle(
  parent: { prompt(text: string): Promise<void>; waitForIdle(timeoutMs?: number): Promise<void> },
  text: string,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    await parent.waitForIdle(45_000);
    try {
      await parent.prompt(text);
      return;
    } catch (error) {
      if (attempt >= 20 || !String(error).includes("already processing")) throw error;
    }
  }
}

/** Poll a condition (files, messages) until it holds; the timeout only turns a hang into a failure. */
export async function until(check: () => boolean, what: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export type DrivenParent = Parameters<typeof promptWhenIdle>[0] & { messages(): readonly unknown[] };

/** Have the scripted parent call `tool` (bg_delegate, bg_fusion); returns its receipt's text (fails on a refusal). */
export async function receiptVia(parent: DrivenParent, tool: string, args: Record<string, unknown>): Promise<string> {
  await promptWhenIdle(parent, call(tool, args));
  const receipt = lastToolResult(parent.messages(), tool);
  if (receipt.isError) throw new Error(`${tool} refused: ${receipt.text}`);
  return receipt.text;
}

/** Have the scripted parent call bg_delegate; returns the task id from the receipt (fails on a refusal). */
export async function delegateVia(parent: DrivenParent, args: Record<string, unknown>): Promise<string> {
  return taskIdOf(await receiptVia(parent, "bg_delegate", args));
}

/** A follow-up of `previousTaskId` through the scripted parent, settled: its notice came and the turn after it ended; its task id. */
export async function followUpVia(
  parent: DrivenParent & { waitForIdle(): Promise<void> },
  previousTaskId: string,
  name: string,
  prompt: string,
): Promise<string> {
  const id = await delegateVia(parent, { name, previousTaskId, prompt });
  await noticeOf(parent, id);
  await parent.waitForIdle();
  return id;
}

/** Have the scripted parent call bg_result; returns that tool result. */
export async function bgResultVia(parent: DrivenParent, args: Record<string, unknown>) {
  await promptWhenIdle(parent, call("bg_result", args));
  return lastToolResult(parent.messages(), "bg_result");
}

/**
 * Drive the parent by instruction and hold every child model request at a gate until released,
 * then answer `answer`. `asked()` tells whether a child has reached the model yet, `count()` how
 * many child requests have.
 */
export function installHeldChildren(server: ModelServer, answer: string) {
  const held = gate();
  let count = 0;
  installParentDriver(server, async () => {
    count++;
    await held.wait;
    return { text: answer };
  });
  return { release: held.release, asked: () => count > 0, count: () => count };
}
