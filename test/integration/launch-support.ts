/**
 * Shared pieces of the launch tests (admission, launch boundary, launch faults): how the scripted
 * server plays the parent's model, how a child's request is told apart, how tool results of a real
 * SDK parent are read, and what "nothing was created" means on disk.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "vitest";
import { FAILURE_REMEDIATION, type FailureCode } from "../../src/core/errors.ts";
import { isChildRequest, type ToolResultView, toolResults } from "../helpers/drive.ts";
import {
  type FakeReply,
  findProcesses,
  type ModelHandler,
  type ModelRequest,
  type ModelServer,
  type ParentMessage,
  type RpcParent,
} from "../helpers/pi-parent.ts";

export type ToolCall = NonNullable<FakeReply["toolCalls"]>[number];

/**
 * The parent's model: on a fresh user message (a prompt, or a notification, which pi sends as a
 * user-role message) `onUser` decides the reply; after tool results it ends the turn with a short
 * text. Child requests go to `onChild` (default: a plain answer, so the child commits).
 */
export function parentModel(options: {
  onUser: (text: string, request: ModelRequest) => FakeReply | undefined;
  onChild?: (request: ModelRequest) => FakeReply | Promise<FakeReply>;
}): ModelHandler {
  return (request) => {
    if (isChildRequest(request)) return options.onChild ? options.onChild(request) : { text: "child answer" };
    const last = request.messages.at(-1);
    if (last?.role === "tool") return { text: "noted" };
    if (last?.role === "user") return options.onUser(last.text, request);
    return undefined;
  };
}

/** Reply to a user message with these tool calls (ids fixed, so results can be found by id). */
export function calls(...list: ToolCall[]): FakeReply {
  return { toolCalls: list };
}

export function delegateCall(id: string, args: Record<string, unknown>): ToolCall {
  return { id, name: "bg_delegate", args };
}

/** An RPC parent's messages, as the SDK's message type. */
export async function messagesOf(parent: RpcParent): Promise<ParentMessage[]> {
  return (await parent.messages()) as unknown as ParentMessage[];
}

export function resultOf(messages: readonly ParentMessage[], toolCallId: string): ToolResultView {
  const found = toolResults(messages).find((r) => r.toolCallId === toolCallId);
  if (!found) throw new Error(`no tool result for ${toolCallId}`);
  return found;
}

/**
 * A refusal as docs/failure-codes.md ("How a failure reads") renders it: "[code] message", no child,
 * no artifact or output line (nothing exists to point at), and the code's remediation.
 */
export function expectRefusal(result: ToolResultView, code: FailureCode): void {
  expect(result.toolName).toBe("bg_delegate");
  expect(result.isError).toBe(true);
  const lines = result.text.split("\n");
  expect(lines[0]).toMatch(new RegExp(`^\\[${code}\\] \\S`));
  expect(lines.slice(1)).toEqual(["Child process created: no", `Remediation: ${FAILURE_REMEDIATION[code]}`]);
}

/**
 * A refusal from a pi parent over RPC left nothing behind: no child reached the model, no process
 * but the parent names the agent dir, and the project holds no .pi tree.
 */
export async function expectNothingStarted(
  server: ModelServer,
  agentDir: string,
  parent: { pid: number | undefined },
  cwd: string,
): Promise<void> {
  expect(server.requests.filter(isChildRequest)).toEqual([]);
  const others = (await findProcesses(agentDir, { includeEnv: true })).filter((p) => p.pid !== parent.pid);
  expect(others).toEqual([]);
  expect(listTree(join(cwd, ".pi"))).toEqual([]);
}

/** Every path under `dir` (relative, sorted), directories marked with a trailing "/"; [] when absent. */
export function listTree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const isDir = statSync(path).isDirectory();
      out.push(`${relative(dir, path)}${isDir ? "/" : ""}`);
      if (isDir) walk(path);
    }
  };
  if (statSync(dir).isDirectory()) walk(dir);
  return out.sort();
}

/** Task dirs under `<cwd>/.pi/delegate/<session>/`. */
export function taskDirs(cwd: string): string[] {
  const root = join(cwd, ".pi", "delegate");
  if (!existsSync(root) || !statSync(root).isDirectory()) return [];
  const dirs = (dir: string) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  return dirs(root).flatMap((session) => dirs(join(root, session)).map((task) => join(root, session, task)));
}

export function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

/** The process group of a live process (field 5 of /proc/<pid>/stat); undefined when it is gone. */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}

/** Whether any process of group `pgid` is alive (signal 0 to the group). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Resolve with a tool result as soon as pi ends its message (before the turn goes on). */
export async function waitForToolResult(
  log: { waitFor(predicate: (event: { type: string }) => boolean, options?: { timeoutMs?: number }): Promise<unknown> },
  toolCallId: string,
  timeoutMs?: number,
): Promise<ToolResultView> {
  const event = (await log.waitFor(
    (e) => {
      const m = (e as { message?: { role?: string; toolCallId?: string } }).message;
      return e.type === "message_end" && m?.role === "toolResult" && m.toolCallId === toolCallId;
    },
    { timeoutMs },
  )) as { message: ParentMessage };
  const [view] = toolResults([event.message]);
  if (!view) throw new Error(`message_end for ${toolCallId} holds no tool result`);
  return view;
}

/**
 * `fn` with an environment string over Linux's 128 KiB cap for one string in this process: every
 * child spawned meanwhile inherits it and execve refuses it (E2BIG, child_spawn_failed); `fn`'s value.
 */
export async function withUnspawnableEnv<T>(fn: () => Promise<T>): Promise<T> {
  process.env.PI_BGD_TEST_HUGE = "x".repeat(256 * 1024);
  try {
    return await fn();
  } finally {
    delete process.env.PI_BGD_TEST_HUGE;
  }
}
