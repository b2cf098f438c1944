/**
 * The link between the host's Fusion runs and one live session, like the delegate SessionLink: it
 * delivers each ended run's one notice to the session that started it, and at session start the
 * notices of runs that ended while no session of ours was live (docs/subsystems/fusion.md, "The notice").
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { loadFusionManifest } from "../fusion/index.ts";
import { readRunRecord } from "../fusion/run-record.ts";
import { listTaskRefs } from "../store/lookup.ts";
import { adjudicateRun } from "./adjudicate.ts";
import { markRunNotified, notifiedInSession, sendRunNotice } from "./notifier.ts";
import { getFusionRuns, type RunEnd } from "./runs.ts";

/** How often a run held by another process (or waiting for its children) is looked at again. */
const RECHECK_MS = 1_000;

export class FusionLink {
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly pi: ExtensionAPI,
    private readonly ctx: ExtensionContext,
  ) {
    this.unsubscribe = getFusionRuns().subscribe((end) => void this.send(end));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.recheck);
    this.unsubscribe();
  }

  private send(end: RunEnd): Promise<void> {
    return sendRunNotice(this.pi, this.ctx, end, () => !this.closed);
  }

  private recheck: NodeJS.Timeout | undefined;

  /**
   * Notices of this session's runs that ended while no session of ours was live; a run whose owner
   * is gone is adjudicated first (src/fusion-run/adjudicate.ts), and one whose children still run is
   * looked at again until they end.
   */
  async deliverPending(): Promise<void> {
    if (this.closed) return;
    const seen = notifiedInSession(this.ctx);
    const runs = getFusionRuns();
    let waiting = false;
    for (const ref of listTaskRefs(this.ctx.cwd)) {
      if (ref.kind !== "fusion" || runs.live.has(ref.id)) continue;
      if (seen.has(ref.id)) {
        markRunNotified(ref.dir, ref.id);
        continue;
      }
      try {
        let manifest = await loadFusionManifest(ref.dir);
        const record = readRunRecord(ref.dir, manifest);
        if (record === null || record.parent_session_id !== this.ctx.sessionManager.getSessionId()) continue;
        if (manifest.state === "running") {
          const verdict = adjudicateRun(this.ctx.cwd, ref.dir, manifest);
          if (verdict.kind !== "committed") {
            waiting ||= verdict.kind === "waiting" || manifest.owner.pid !== process.pid;
            continue;
          }
          manifest = verdict.manifest;
        }
        await this.send({ runId: ref.id, runDir: ref.dir, record, manifest, cost: null });
      } catch {
        // a run whose files cannot be read is reported by bg_result, not here
      }
    }
    clearTimeout(this.recheck);
    if (waiting && !this.closed) {
      this.recheck = setTimeout(() => void this.deliverPending(), RECHECK_MS);
      this.recheck.unref();
    }
  }
}
