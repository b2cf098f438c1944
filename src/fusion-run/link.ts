/**
 * The link between the host's Fusion runs and one live session, like the delegate SessionLink: it
 * delivers each ended run's one notice to the session that started it, and at session start the
 * notices of runs that ended while no session of ours was live (docs/subsystems/fusion.md, "The notice").
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { loadFusionManifest } from "../fusion/index.ts";
import { listTaskRefs } from "../store/lookup.ts";
import { notifiedInSession, sendRunNotice } from "./notifier.ts";
import { readRunRecord } from "./record.ts";
import { getFusionRuns, type RunEnd } from "./runs.ts";

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
    this.unsubscribe();
  }

  private send(end: RunEnd): Promise<void> {
    return sendRunNotice(this.pi, this.ctx, end, () => !this.closed);
  }

  /** Notices of this session's runs that ended while no session of ours was live. */
  async deliverPending(): Promise<void> {
    if (this.closed) return;
    const seen = notifiedInSession(this.ctx);
    const runs = getFusionRuns();
    for (const ref of listTaskRefs(this.ctx.cwd)) {
      if (ref.kind !== "fusion" || seen.has(ref.id) || runs.live.has(ref.id)) continue;
      try {
        const manifest = await loadFusionManifest(ref.dir);
        if (manifest.state === "running") continue;
        const record = readRunRecord(ref.dir, manifest);
        if (record === null) continue;
        await this.send({ runId: ref.id, runDir: ref.dir, record, manifest });
      } catch {
        // a run whose files cannot be read is reported by bg_result, not here
      }
    }
  }
}
