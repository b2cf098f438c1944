/**
 * The Fusion run as a kind of background work (src/tasks/kind.ts): its manifest through the run
 * contract's closed schema (src/fusion/read.ts), whether its owner still runs it, its adjudication
 * once its owner is gone (src/tasks/adjudicate.ts), its rows (src/tasks/fusion-row.ts), its cancel
 * request and its completion notice
 * (src/tasks/fusion-notice.ts).
 */
import { type FusionManifest, loadFusionManifest, readManifestDocument } from "../fusion/index.ts";
import { readRunRecord } from "../fusion/run-record.ts";
import { adjudicateRun } from "./adjudicate.ts";
import { markRunNotified, runNotice } from "./fusion-notice.ts";
import { checkedFusionRow, fusionRow } from "./fusion-row.ts";
import type { TaskKind } from "./kind.ts";
import { fusionLiveness } from "./running.ts";

export const fusionKind: TaskKind<FusionManifest, FusionManifest> = {
  kind: "fusion",
  read: loadFusionManifest,
  isRunning: fusionLiveness.isRunning,
  adjudicate: adjudicateRun,
  row: fusionRow,
  checkedRow: checkedFusionRow,
  cancelRecord: (dir) => {
    const { state, owner, run_id } = readManifestDocument(dir);
    return { state, owner, childAlive: false, identity: { run_id } };
  },
  /**
   * A run of the session found on disk: already noticed (marked now), still owned, waiting for its
   * children, or ended — one whose owner is gone is adjudicated first.
   */
  notice: async (ref, session) => {
    if (session.seen.has(ref.id)) {
      markRunNotified(ref.dir, ref.id);
      return { kind: "none" };
    }
    let manifest = await fusionKind.read(ref.dir);
    const record = readRunRecord(ref.dir, manifest);
    if (record === null || record.parent_session_id !== session.sessionId) return { kind: "none" };
    if (manifest.state === "running") {
      const verdict = fusionKind.adjudicate(session.cwd, ref.dir, manifest);
      if (verdict.kind !== "settled") return { kind: "waiting", group: record.group?.id };
      manifest = verdict.end;
    }
    const end = { runId: ref.id, runDir: ref.dir, record, manifest };
    return { kind: "notice", notice: runNotice(end, session.cwd) };
  },
};
