/**
 * The one cancel of a delegate task or a Fusion run (docs/cli.md, "cancel"), for every caller:
 * `/delegates cancel`, `pi-bg-delegate cancel`. Owned by this process: it is ended here (the delegate
 * registry or the live Fusion runs). Owned by another live Pi process of this user, proven by pid,
 * /proc start time and uid: a cancel request is left in its directory, which that owner looks for
 * every second and then ends it the same way. Anything else is refused with the reason. This module
 * never signals a process: only the owner, through its own child handles, ends a child.
 */
import { join } from "node:path";
import { canonicalJsonLine } from "../core/canonical.ts";
import { FUSION_FILES, TASK_FILES } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import type { TaskState } from "../core/types.ts";
import { readManifestDocument } from "../fusion/index.ts";
import { getFusionRuns } from "../fusion-run/runs.ts";
import { isAlive, type ProvenProcess, proveSameProcess } from "../process/identity.ts";
import { getRegistry } from "../retrieval/registry.ts";
import { readManifest, type TaskRef } from "../store/lookup.ts";

/** What a cancel is decided from. */
export interface CancelFacts {
  kind: TaskRef["kind"];
  /** This process runs it (its delegate registry or its live Fusion runs hold it). */
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

/** What holds live tasks or runs in this process: the delegate registry or the live Fusion runs. */
interface Holder<T> {
  readonly live: ReadonlyMap<string, T>;
  readonly quiet: Set<string>;
  end(id: string, reason: "cancelled"): boolean;
}

/** End a task or run this process holds, quietly (the caller says so itself); null when it holds none. */
function endIfHeld<T>(holder: Holder<T>, id: string, ending: (held: T) => CancelOutcome): CancelOutcome | null {
  const held = holder.live.get(id);
  if (held === undefined) return null;
  holder.quiet.add(id);
  holder.end(id, "cancelled");
  return ending(held);
}

/** What the manifest on disk says of a task or run this process does not hold. */
interface Recorded {
  state: TaskState;
  owner: { pid: number; start_time: string };
  /** A delegate's child process still exists (never for a run: its children are its owner's). */
  childAlive: boolean;
  /** Where a cancel request goes, and the identity it names. */
  requestPath: string;
  identity: Record<string, string>;
}

/** A task or run this process does not hold: decided from its manifest, a request or a refusal. */
function cancelRecorded(kind: TaskRef["kind"], uid: number | undefined, read: () => Recorded): CancelOutcome {
  let recorded: Recorded;
  try {
    recorded = read();
  } catch (error) {
    return { kind: "refused", running: false, why: `its manifest cannot be read (${messageOf(error)})` };
  }
  const { state, owner } = recorded;
  const decision = decideCancel({
    kind,
    heldHere: false,
    state,
    ownerPid: owner.pid,
    owner: state === "running" ? ownerFacts(owner) : { kind: "gone", why: "not asked" },
    childAlive: recorded.childAlive,
    uid,
  });
  return act(decision, recorded.requestPath, recorded.identity);
}

function cancelDelegate(ref: TaskRef, uid: number | undefined): CancelOutcome {
  const ending = endIfHeld(getRegistry(), ref.id, (held) => ({
    kind: "ending",
    name: held.manifest.name,
    runningChildren: 0,
  }));
  return (
    ending ??
    cancelRecorded("delegate", uid, () => {
      const manifest = readManifest(ref.dir);
      return {
        state: manifest.state,
        owner: manifest.owner,
        childAlive: manifest.child !== null && isAlive(manifest.child.pid),
        requestPath: join(ref.dir, TASK_FILES.cancelRequest),
        identity: { task_id: manifest.task_id },
      };
    })
  );
}

function cancelRun(ref: TaskRef, uid: number | undefined): CancelOutcome {
  const ending = endIfHeld(getFusionRuns(), ref.id, (run) => ({
    kind: "ending",
    name: run.record.name,
    runningChildren: run.children.filter((c) => c.running).length,
  }));
  return (
    ending ??
    cancelRecorded("fusion", uid, () => {
      const manifest = readManifestDocument(ref.dir);
      const request = join(ref.dir, FUSION_FILES.cancelRequest);
      return {
        state: manifest.state,
        owner: manifest.owner,
        childAlive: false,
        requestPath: request,
        identity: { run_id: manifest.run_id },
      };
    })
  );
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
        return { kind: "refused", running: true, why: `the cancel request could not be written (${messageOf(error)})` };
      }
      return { kind: "requested", ownerPid: decision.ownerPid };
  }
}

/** Cancel a delegate task or a Fusion run: here if this process holds it, else by a request its proven owner acts on. */
export function cancelTask(ref: TaskRef, uid: number | undefined = process.getuid?.()): CancelOutcome {
  return ref.kind === "delegate" ? cancelDelegate(ref, uid) : cancelRun(ref, uid);
}
