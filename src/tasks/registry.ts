/**
 * One registry per host process for both kinds of background work, kept on globalThis so a reloaded
 * extension instance finds the delegates and Fusion runs the previous instance started
 * (docs/subsystems/retrieval.md, "One registry per host process"). It owns the children's handles,
 * the deadlines and the watches for cancel requests; an extension instance only subscribes to the
 * ends for the duration of its session. A run's pipeline lives in this process; its children are
 * delegates of this same registry.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { FUSION_FILES, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { TaskGroup } from "../core/group.ts";
import type { DelegateManifest } from "../core/types.ts";
import { writeFailure } from "../core/write-failure.ts";
import { killGroup, type SpawnedChild } from "../process/spawn.ts";
import { adjudicateTask } from "./adjudicate-task.ts";
import { commitEnded } from "./fusion-end.ts";
import type { EndReason, LiveRun, LiveTask, RunEnd, TaskEnd, TaskEvent } from "./live.ts";

/** Grace between SIGTERM and SIGKILL when the parent ends a child. */
const KILL_GRACE_MS = 2_000;

/** How often live work looks for a cancel request another process left in its directory. */
const CANCEL_REQUEST_POLL_MS = 1_000;

export type TaskListener = (event: TaskEvent) => void;

export class TaskRegistry {
  /** Delegates whose child this host runs. */
  readonly delegates = new Map<string, LiveTask>();
  /** Fusion runs whose pipeline this host runs. */
  readonly runs = new Map<string, LiveRun>();
  /**
   * Delegates this host committed and is starting (between the locked commit and track), id → its
   * group's id: running by every count (src/tasks/running.ts), so a second launch in this process
   * cannot pass the cap meanwhile, nor its group's notice go before it.
   */
  readonly starting = new Map<string, string | undefined>();
  /** Every delegate this host has seen: id → dir (result_unavailable when the dir later vanishes). */
  readonly known = new Map<string, string>();
  /** Ids whose notice this host already handed to a session. */
  readonly notified = new Set<string>();
  /** Ids the person cancelled: their notice is recorded without starting a model turn. */
  readonly quiet = new Set<string>();
  /**
   * Grouped Fusion runs this host ran that ended, by run id (the footer still counts them in their
   * group's total; a run is otherwise forgotten once it committed).
   */
  readonly endedGroupedRuns = new Map<string, { runDir: string; group: TaskGroup }>();
  private readonly listeners = new Set<TaskListener>();
  private exitHookInstalled = false;

  subscribe(listener: TaskListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hold a started delegate: its deadline, its cancel watch, and its adjudication once it exits. */
  track(taskDir: string, manifest: DelegateManifest, child: SpawnedChild, outlive = false): LiveTask {
    this.installExitHook();
    const taskId = manifest.task_id;
    const deadline = setTimeout(() => this.end(taskId, "timeout"), manifest.limits.timeout_seconds * 1000);
    deadline.unref();
    const task: LiveTask = {
      taskId,
      taskDir,
      cwd: manifest.cwd,
      manifest,
      pid: child.pid,
      startedAt: Date.now(),
      reason: undefined,
      deadline,
      watch: this.watchCancelRequest(join(taskDir, TASK_FILES.cancelRequest), taskId),
      done: child.exited.then(() => this.recordEnd(taskId)),
      outlive,
      leftRunning: false,
    };
    this.delegates.set(taskId, task);
    this.known.set(taskId, taskDir);
    return task;
  }

  /** Hold a started Fusion run (its deadline is armed by its start); its pipeline settles it. */
  addRun(run: LiveRun): void {
    this.installExitHook();
    this.runs.set(run.runId, run);
    run.watch = this.watchCancelRequest(join(run.runDir, FUSION_FILES.cancelRequest), run.runId);
  }

  /**
   * End held work from outside: a delegate's process group is killed (its exit handler adjudicates);
   * a run's running children are, and its pipeline commits the end. False when nothing is held.
   */
  end(id: string, reason: EndReason): boolean {
    const run = this.runs.get(id);
    if (run) {
      run.reason ??= reason;
      for (const child of run.children) if (child.running) this.end(child.taskId, reason);
      return true;
    }
    const task = this.delegates.get(id);
    if (!task) return false;
    task.reason ??= reason;
    killGroup(task.pid, "SIGTERM");
    setTimeout(() => killGroup(task.pid, "SIGKILL"), KILL_GRACE_MS).unref();
    return true;
  }

  /** A run's pipeline committed: forget the run and tell every subscriber. */
  recordRunEnd(end: RunEnd): void {
    if (end.record.group) this.endedGroupedRuns.set(end.runId, { runDir: end.runDir, group: end.record.group });
    this.forgetRun(end.runId);
    this.tell({ kind: "fusion", end });
  }

  /** Forget a run without news (nothing was committed to tell: its start failed, or its dir is gone). */
  forgetRun(runId: string): void {
    const run = this.runs.get(runId);
    if (run) stopTimers(run);
    this.runs.delete(runId);
  }

  /** Whether this host still runs (or is starting) a member of group `groupId` (docs/tools/bg_delegate.md, "Groups"). */
  runsGroup(groupId: string): boolean {
    for (const group of this.starting.values()) if (group === groupId) return true;
    for (const task of this.delegates.values()) if (task.manifest.group?.id === groupId) return true;
    for (const run of this.runs.values()) if (run.record.group?.id === groupId) return true;
    return false;
  }

  runningIn(cwd: string): LiveTask[] {
    return [...this.delegates.values()].filter((t) => t.cwd === cwd);
  }

  /**
   * Quitting under bgDelegate.onExit "finish": the delegates launched so are let go — no kill, no
   * record — and returned; their children keep their own deadline and commit as usual, and a later
   * session of theirs adjudicates and tells them (src/tasks/link.ts, deliverPending). A Fusion run's
   * children are never among them.
   */
  leaveRunning(): LiveTask[] {
    const left = [...this.delegates.values()].filter((task) => task.outlive);
    for (const task of left) {
      clearTimeout(task.deadline);
      clearInterval(task.watch);
      task.leftRunning = true;
    }
    return left;
  }

  /**
   * Host exit: nothing may outlive it. Every child is killed and recorded, then every live run is
   * committed as cancelled with its children's figures (the writer is synchronous, so this also works
   * from process 'exit').
   */
  cancelAll(): void {
    for (const run of this.runs.values()) run.reason ??= "cancelled";
    for (const task of this.delegates.values()) {
      if (task.leftRunning === true) continue; // let go at quit (leaveRunning): its child finishes on its own
      task.reason ??= "cancelled";
      killGroup(task.pid, "SIGKILL");
      try {
        // The exit handler will not run once the host is gone: adjudicate now.
        adjudicateTask(task.taskDir, task.manifest, task.reason);
      } catch {
        // a missing dir cannot be recorded; the child is dead either way
      }
    }
    for (const run of [...this.runs.values()]) {
      commitEnded(run);
      this.forgetRun(run.runId);
    }
  }

  /** Every second: a request file another process left (src/tasks/cancel.ts) ends the work as a quiet cancel. */
  private watchCancelRequest(request: string, id: string): NodeJS.Timeout {
    const watch = setInterval(() => {
      if (!existsSync(request)) return;
      // A person asked from another process (docs/cli.md, "cancel"): a cancel, not news for the model.
      clearInterval(watch);
      this.quiet.add(id);
      this.end(id, "cancelled");
    }, CANCEL_REQUEST_POLL_MS);
    watch.unref();
    return watch;
  }

  /** A child exited: its end is recorded (adjudicateTask, src/tasks/adjudicate-task.ts) and told to the listeners. */
  private recordEnd(taskId: string): TaskEnd {
    const task = this.delegates.get(taskId)!;
    clearTimeout(task.deadline);
    clearInterval(task.watch);
    let end: TaskEnd;
    try {
      end = adjudicateTask(task.taskDir, task.manifest, task.reason);
    } catch (error) {
      // Nothing durable could be recorded; say so live: result_unavailable only when the tree is
      // gone, else the write's own typed failure (disk_full on a full disk; src/core/write-failure.ts).
      const failure = existsSync(task.taskDir)
        ? writeFailure(error, task.taskDir, "the task's end could not be recorded", "artifact_error", {
            childProcessCreated: true,
          })
        : new DelegateError(
            "result_unavailable",
            `the task's artifacts are gone: ${String(error)}`,
            { childProcessCreated: true },
            { cause: error },
          );
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
    this.delegates.delete(taskId);
    this.tell({ kind: "delegate", end });
    return end;
  }

  private tell(event: TaskEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // one listener's failure must not stop the others
      }
    }
  }

  private installExitHook(): void {
    if (this.exitHookInstalled) return;
    this.exitHookInstalled = true;
    process.once("exit", () => this.cancelAll());
  }
}

function stopTimers(run: LiveRun): void {
  clearTimeout(run.deadline);
  clearInterval(run.watch);
}

const REGISTRY_KEY = Symbol.for("pi-bg-delegate.tasks.v1");

export function getRegistry(): TaskRegistry {
  const holder = globalThis as typeof globalThis & { [REGISTRY_KEY]?: TaskRegistry };
  holder[REGISTRY_KEY] ??= new TaskRegistry();
  return holder[REGISTRY_KEY];
}
