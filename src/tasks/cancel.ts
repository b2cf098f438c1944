/**
 * The one cancel of a delegate task or a Fusion run (docs/cli.md, "cancel"), for every caller:
 * `/delegates cancel`, `pi-bg-delegate cancel`, each through `cancelTask` (src/tasks/seam.ts) and its
 * kind. Owned by this process: it is ended here (the one registry, src/tasks/registry.ts). Owned by another live Pi process of this user, proven by pid,
 * /proc start time and uid: a cancel request is left in its directory, which that owner looks for
 * every second and then ends it the same way. Anything else is refused with the reason. This module
 * never signals a process: only the owner, through its own child handles, ends a child.
 */
import { join } from "node:path";
import { canonicalJsonLine } from "../core/canonical.ts";
import { CANCEL_REQUEST_FILE } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import type { TaskState } from "../core/types.ts";
import { isDiskFull } from "../core/write-failure.ts";
import { type ProvenProcess, proveSameProcess } from "../process/identity.ts";
import type { TaskRef } from "../store/lookup.ts";
import { getRegistry } from "./registry.ts";

/** What a cancel is decided from. */
export interface CancelFacts {
  kind: TaskRef["kind"];
  /** This process runs it (its registry holds it). */
  heldHere: boolean;
  /** The state its manifest records. */
  state: TaskState;
  ownerPid: number;
  /** What /proc proves about the recorded owner; "gone" when the owner is this process (it no longer runs it). */
  owner: ProvenProcess;
  /** A delegate's child process still exists (it stops by itself once it sees its owner gone). */
  childAlive: boolean;
  /** This process's user id (undefined where the platform has none). */
  uid: number | undefined;
}

export type CancelDecision =
  | { kind: "end_here" }
  | { kind: "request"; ownerPid: number }
  /** `running`: it may still run (a refusal, not "nothing to cancel"). */
  | { kind: "refuse"; running: boolean; why: string };

/** The decision, from facts alone: never a signal to a pid whose identity was not proven. */
export function decideCancel(f: CancelFacts): CancelDecision {
  if (f.heldHere) return { kind: "end_here" };
  if (f.state !== "running") return { kind: "refuse", running: false, why: f.state };
  const pid = f.ownerPid;
  if (f.owner.kind === "gone") {
    if (f.kind === "delegate" && f.childAlive) {
      return {
        kind: "refuse",
        running: true,
        why: `its owner (pid ${pid}) is gone (${f.owner.why}); its child stops by itself on seeing that, and bg_result records the end`,
      };
    }
    return {
      kind: "refuse",
      running: false,
      why:
        f.kind === "delegate"
          ? "recorded as running, but its owner and child are gone"
          : `recorded as running, but its owner (pid ${pid}) is gone; it is recorded as cancelled once none of its children runs`,
    };
  }
  if (f.owner.kind === "unproven") {
    return {
      kind: "refuse",
      running: true,
      why: `the facts of its owner (pid ${pid}) cannot be read (${f.owner.why}), so that pid is not proven to be the Pi process that started it`,
    };
  }
  if (f.uid === undefined) return { kind: "refuse", running: true, why: "this process's user id cannot be read" };
  if (f.owner.uid !== f.uid) {
    return { kind: "refuse", running: true, why: `its owner (pid ${pid}) belongs to another user` };
  }
  return { kind: "request", ownerPid: pid };
}

export type CancelOutcome =
  /** This process ends it now; `runningChildren` for a Fusion run. */
  | { kind: "ending"; name: string; runningChildren: number }
  /** A request was left for the owner (pid), which ends it within a second. */
  | { kind: "requested"; ownerPid: number }
  | { kind: "refused"; running: boolean; why: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function ownerFacts(owner: { pid: number; start_time: string }): ProvenProcess {
  return owner.pid === process.pid
    ? { kind: "gone", why: "this Pi process no longer runs it" }
    : proveSameProcess(owner.pid, owner.start_time);
}

/** What a kind reads from its manifest for the one cancel (src/tasks/kind.ts). */
export interface CancelRecord {
  state: TaskState;
  owner: { pid: number; start_time: string };
  /** A delegate's child process still exists; false for a Fusion run. */
  childAlive: boolean;
  /** The ids a cancel request names. */
  identity: Record<string, string>;
}

/**
 * Cancel a delegate or a Fusion run: here if this process's registry holds it, else by a request its
 * proven owner acts on (the facts come from `read`, the kind's reader of its manifest).
 */
export function cancelWork(ref: TaskRef, uid: number | undefined, read: (dir: string) => CancelRecord): CancelOutcome {
  const registry = getRegistry();
  const run = registry.runs.get(ref.id);
  const task = registry.delegates.get(ref.id);
  if (run || task) {
    registry.quiet.add(ref.id);
    registry.end(ref.id, "cancelled");
    return run
      ? { kind: "ending", name: run.record.name, runningChildren: run.children.filter((c) => c.running).length }
      : { kind: "ending", name: task!.manifest.name, runningChildren: 0 };
  }
  // A foreign tree is never cancelled or signalled (docs/subsystems/launch.md, "The store is yours").
  if (!ref.trust.mine) return { kind: "refused", running: false, why: `it is foreign: ${ref.trust.why}` };
  let record: CancelRecord;
  try {
    record = read(ref.dir);
  } catch (error) {
    return { kind: "refused", running: false, why: `its manifest cannot be read (${messageOf(error)})` };
  }
  const decision = decideCancel({
    kind: ref.kind,
    heldHere: false,
    state: record.state,
    ownerPid: record.owner.pid,
    owner: record.state === "running" ? ownerFacts(record.owner) : { kind: "gone", why: "not asked" },
    childAlive: record.childAlive,
    uid,
  });
  return act(decision, join(ref.dir, CANCEL_REQUEST_FILE), record.identity);
}

/** Carry out a decision about a task this process does not hold. */
function act(decision: CancelDecision, requestPath: string, identity: Record<string, string>): CancelOutcome {
  switch (decision.kind) {
    case "refuse":
      return { kind: "refused", running: decision.running, why: decision.why };
    case "end_here":
      // Only a task this process holds is ended here, and those are handled before the manifest is read.
      return { kind: "refused", running: true, why: "this Pi process no longer holds it" };
    case "request":
      try {
        writeFileAtomic(
          requestPath,
          canonicalJsonLine({ ...identity, requested_at: new Date().toISOString(), by_pid: process.pid }),
        );
      } catch (error) {
        // A full disk is named as such, never as a bare errno (src/core/write-failure.ts).
        const cause = isDiskFull(error) ? `the filesystem holding ${requestPath} has no space left` : messageOf(error);
        return { kind: "refused", running: true, why: `the cancel request could not be written (${cause})` };
      }
      return { kind: "requested", ownerPid: decision.ownerPid };
  }
}
