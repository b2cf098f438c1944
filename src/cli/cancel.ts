/**
 * `cancel <id>` (docs/cli.md, "cancel"): what /delegates cancel does for a task another process owns —
 * SIGTERM to the child's process group — and only when that owner is this user's live Pi process and
 * the child is still its child. A cancel request is recorded first so the owner records child_cancelled.
 */
import { join } from "node:path";
import { canonicalJsonLine } from "../core/canonical.ts";
import { TASK_FILES } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import type { DelegateManifest } from "../core/types.ts";
import { cancelRun } from "../fusion-run/cancel.ts";
import { isSameProcessAlive, processTies } from "../process/identity.ts";
import { killGroup } from "../process/spawn.ts";
import { isTaskRunning } from "../retrieval/running.ts";
import { readManifest, type TaskRef } from "../store/lookup.ts";
import { EXIT } from "./args.ts";
import { visibleLines } from "./format.ts";
import type { CliIo } from "./main.ts";

/** Why this process may not signal the task's child, or null when it may. */
export function cancelRefusal(manifest: DelegateManifest, uid: number | undefined): string | null {
  const { owner, child } = manifest;
  if (child === null) return "its child was never started";
  if (!isSameProcessAlive(owner.pid, owner.start_time)) return `its owner (pid ${owner.pid}) is gone`;
  const ownerTies = processTies(owner.pid);
  if (ownerTies === null) return `its owner (pid ${owner.pid}) is gone`;
  if (uid !== undefined && ownerTies.uid !== uid) return `its owner (pid ${owner.pid}) belongs to another user`;
  const childTies = processTies(child.pid);
  if (childTies === null) return `its child (pid ${child.pid}) is gone`;
  if (childTies.pgrp !== child.pgid || childTies.ppid !== owner.pid) {
    return `pid ${child.pid} is no longer the child its owner (pid ${owner.pid}) started`;
  }
  return null;
}

export function cancelTask(cli: CliIo, ref: TaskRef): number {
  // What a task tree says (ids, reasons) reaches the terminal escaped (src/cli/format.ts).
  const io = {
    stdout: (text: string) => cli.stdout(visibleLines(text)),
    stderr: (text: string) => cli.stderr(visibleLines(text)),
  };
  if (ref.kind !== "delegate") {
    const outcome = cancelRun(ref.dir, ref.id);
    if (outcome.kind === "refused") {
      io.stderr(`${ref.id} was not cancelled: ${outcome.why}.\n`);
      return EXIT.refused;
    }
    io.stdout(
      `Asked the Pi process that owns ${ref.id} (pid ${outcome.kind === "requested" ? outcome.ownerPid : process.pid}) ` +
        "to cancel it; it ends the run's children and records the run as cancelled (child_cancelled).\n",
    );
    return EXIT.ok;
  }
  const manifest = readManifest(ref.dir);
  if (!isTaskRunning(manifest)) {
    const why = manifest.state === "running" ? "recorded as running, but its owner and child are gone" : manifest.state;
    io.stderr(`${manifest.task_id} is not running (${why}); nothing was changed.\n`);
    return EXIT.refused;
  }
  const refusal = cancelRefusal(manifest, process.getuid?.());
  if (refusal !== null) {
    io.stderr(`${manifest.task_id} was not cancelled: ${refusal}.\n`);
    return EXIT.refused;
  }
  writeFileAtomic(
    join(ref.dir, TASK_FILES.cancelRequest),
    canonicalJsonLine({ task_id: manifest.task_id, requested_at: new Date().toISOString(), by_pid: process.pid }),
  );
  killGroup(manifest.child!.pgid, "SIGTERM");
  io.stdout(
    `Sent SIGTERM to ${manifest.task_id} (process group ${manifest.child!.pgid}, owned by pid ${manifest.owner.pid}); ` +
      "its owner records the end as child_cancelled.\n",
  );
  return EXIT.ok;
}
