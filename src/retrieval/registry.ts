import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { DelegateManifest } from "../core/types.ts";
import { killGroup, type SpawnedChild } from "../process/spawn.ts";
import { fileExists } from "../store/lookup.ts";
import { finalizeTask, type ParentEndReason, type TaskEnd } from "./finalize.ts";

/** Grace between SIGTERM and SIGKILL when the parent ends a child. */
const KILL_GRACE_MS = 2_000;

/** How often a live task looks for a cancel request another process left in its directory. */
const CANCEL_REQUEST_POLL_MS = 1_000;

export interface LiveTask {
  taskId: string;
  taskDir: string;
  cwd: string;
  manifest: DelegateManifest;
  pid: number;
  startedAt: number;
  reason: ParentEndReason | undefined;
  deadline: NodeJS.Timeout;
  /** Looks for a cancel request another process left in the task directory (docs/cli.md, "cancel"). */
  watch: NodeJS.Timeout;
  /** Resolves once the child is gone and the task is adjudicated. */
  done: Promise<TaskEnd>;
}

export type TerminalListener = (end: TaskEnd) => void;

/**
 * One registry per host process, kept on globalThis so a reloaded extension instance finds the
 * children the previous instance started (docs/subsystems/retrieval.md, "One registry per host
 * process"). It owns the handles and deadlines; an
 * extension instance only subscribes for the duration of its session.
 */
export class DelegateRegistry {
  readonly live = new Map<string, LiveTask>();
  /** Every task this host has seen: id → dir (result_unavailable when the dir later vanishes). */
  readonly known = new Map<string, string>();
  /** Task ids whose notification this host already handed to a session. */
  readonly notified = new Set<string>();
  /** Task ids the person cancelled: their notification is recorded without starting a model turn. */
  readonly quiet = new Set<string>();
  private readonly listeners = new Set<TerminalListener>();
  private exitHookInstalled = false;

  subscribe(listener: TerminalListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  track(taskDir: string, manifest: DelegateManifest, child: SpawnedChild): LiveTask {
    this.installExitHook();
    const taskId = manifest.task_id;
    const deadline = setTimeout(() => this.end(taskId, "timeout"), manifest.limits.timeout_seconds * 1000);
    deadline.unref();
    const request = join(taskDir, TASK_FILES.cancelRequest);
    const watch = setInterval(() => {
      if (!fileExists(request)) return;
      // A person asked from another process (src/cancel/cancel.ts): a cancel, not news for the model.
      clearInterval(watch);
      this.quiet.add(taskId);
      this.end(taskId, "cancelled");
    }, CANCEL_REQUEST_POLL_MS);
    watch.unref();
    const task: LiveTask = {
      taskId,
      taskDir,
      cwd: manifest.cwd,
      manifest,
      pid: child.pid,
      startedAt: Date.now(),
      reason: undefined,
      deadline,
      watch,
      done: child.exited.then(() => this.settle(taskId)),
    };
    this.live.set(taskId, task);
    this.known.set(taskId, taskDir);
    return task;
  }

  /** End a running child by killing its process group; the exit handler adjudicates. */
  end(taskId: string, reason: ParentEndReason): boolean {
    const task = this.live.get(taskId);
    if (!task) return false;
    task.reason ??= reason;
    killGroup(task.pid, "SIGTERM");
    setTimeout(() => killGroup(task.pid, "SIGKILL"), KILL_GRACE_MS).unref();
    return true;
  }

  runningIn(cwd: string): LiveTask[] {
    return [...this.live.values()].filter((t) => t.cwd === cwd);
  }

  /** Host exit: no child may outlive it. Synchronous, so it also works from process 'exit'. */
  cancelAll(): void {
    for (const task of this.live.values()) {
      task.reason ??= "cancelled";
      killGroup(task.pid, "SIGKILL");
      try {
        // The exit handler will not run once the host is gone: adjudicate now.
        finalizeTask(task.taskDir, task.manifest, task.reason);
      } catch {
        // a missing dir cannot be recorded; the child is dead either way
      }
    }
  }

  private settle(taskId: string): TaskEnd {
    const task = this.live.get(taskId)!;
    clearTimeout(task.deadline);
    clearInterval(task.watch);
    let end: TaskEnd;
    try {
      end = finalizeTask(task.taskDir, task.manifest, task.reason);
    } catch (error) {
      // The task dir vanished (or cannot be written): nothing durable can be recorded; say so live.
      const failure = new DelegateError("result_unavailable", `the task's artifacts are gone: ${String(error)}`, {
        childProcessCreated: true,
      });
      const now = new Date().toISOString();
      end = {
        manifest: {
          ...task.manifest,
          state: "failed",
          updated_at: now,
          terminal: { ended_at: now, code: failure.code, message: failure.message },
        },
        verified: null,
        error: failure,
      };
    }
    this.live.delete(taskId);
    for (const listener of this.listeners) {
      try {
        listener(end);
      } catch {
        // one listener's failure must not stop the others
      }
    }
    return end;
  }

  private installExitHook(): void {
    if (this.exitHookInstalled) return;
    this.exitHookInstalled = true;
    process.once("exit", () => this.cancelAll());
  }
}

const REGISTRY_KEY = Symbol.for("pi-bg-delegate.registry.v1");

export function getRegistry(): DelegateRegistry {
  const holder = globalThis as typeof globalThis & { [REGISTRY_KEY]?: DelegateRegistry };
  holder[REGISTRY_KEY] ??= new DelegateRegistry();
  return holder[REGISTRY_KEY];
}
