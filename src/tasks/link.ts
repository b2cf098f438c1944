/**
 * The link between the host's one registry and one live session (docs/subsystems/retrieval.md, "The
 * completion notice"): it delivers each ended delegate's and Fusion run's one notice to the session
 * that started it, at session start the notices of what ended while no session of ours was live, and
 * goes inert at session_shutdown so nothing ever calls a stale pi/ctx. It reads the session's
 * notification messages once, at its start; what it sends later it adds itself.
 */

import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { FUSION_FILES, NOTIFICATION_CUSTOM_TYPE } from "../core/constants.ts";
import { fileExists } from "../core/fs.ts";
import { listFusionRefs, listSessionRefs, type TaskRef } from "../store/lookup.ts";
import { delegateRoot, sessionDirFor, sessionSegment } from "../store/task-paths.ts";
import { delegateNotice } from "./delegate-notice.ts";
import { runNotice } from "./fusion-notice.ts";
import { type GroupNotice, groupNotice } from "./group-notice.ts";
import type { TaskEvent } from "./live.ts";
import { type AnswerText, type Notice, noticesInSession, writeAnswerRead } from "./notice.ts";
import { getRegistry } from "./registry.ts";
import { TASK_KINDS } from "./seam.ts";

/**
 * Whether a tree can still need this session's notice, told from its path alone, so a session start
 * opens no tree of another session and no run whose notice was delivered (docs/subsystems/retrieval.md,
 * "The completion notice"): a delegate task lives under its session's directory; a Fusion run's
 * session is in its run record, so a run is skipped only once `notified.json` is in its directory
 * (written when its notice reached its session; the directory is private to you).
 */
function mayConcern(ref: TaskRef, cwd: string, sessionId: string): boolean {
  if (ref.kind === "delegate") return ref.dir.startsWith(`${join(delegateRoot(cwd), sessionSegment(sessionId))}/`);
  return !fileExists(join(ref.dir, FUSION_FILES.notified));
}

/** How often work held by another process (or a run waiting for its children) is looked at again. */
const RECHECK_MS = 1_000;

export class SessionLink {
  private closed = false;
  private readonly sessionId: string;
  /** Ids the session holds a notice for → the directory the notice names: the one scan, then what this link sent. */
  private readonly held: Map<string, string | undefined>;
  private readonly unsubscribe: () => void;
  private recheck: NodeJS.Timeout | undefined;
  /** Members' notices held until no member of their group runs (docs/tools/bg_delegate.md, "Groups"): group id → id → notice. */
  private readonly groups = new Map<string, Map<string, Notice>>();
  /** Groups with a member still running in another process, as the last look at the disk found. */
  private waitingGroups = new Set<string>();

  constructor(
    private readonly pi: ExtensionAPI,
    private readonly ctx: ExtensionContext,
    private readonly answerText: AnswerText,
  ) {
    this.sessionId = ctx.sessionManager.getSessionId();
    this.held = noticesInSession(ctx);
    this.unsubscribe = getRegistry().subscribe((event) => void this.onEnd(event));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.recheck);
    this.unsubscribe();
  }

  get context(): ExtensionContext | undefined {
    return this.closed ? undefined : this.ctx;
  }

  /** Ids and dirs bg_result may name as known (result_unavailable once a dir vanished): the host's, and the session's notices. */
  knownTasks(): Map<string, string> {
    const known = new Map(getRegistry().known);
    for (const [id, dir] of this.held) if (dir !== undefined) known.set(id, dir);
    return known;
  }

  /**
   * Deliver once what ended while no session of ours was live (after /reload, /resume, a restart),
   * each kind settling what must be settled first (src/tasks/kind.ts); what another (possibly dying)
   * process still holds is looked at again until it ends.
   */
  async deliverPending(): Promise<void> {
    if (this.closed) return;
    const registry = getRegistry();
    const session = {
      cwd: this.ctx.cwd,
      sessionId: this.sessionId,
      seen: new Set(this.held.keys()),
      answerText: this.answerText,
    };
    let waiting = false;
    const waitingGroups = new Set<string>();
    // This session's delegate trees and the project's Fusion runs: never the other sessions' history.
    const cwd = this.ctx.cwd;
    const refs = [...listSessionRefs(cwd, sessionDirFor(cwd, this.sessionId)), ...listFusionRefs(cwd)];
    for (const ref of refs) {
      if (registry.delegates.has(ref.id) || registry.runs.has(ref.id)) continue; // its end reaches us live
      if (!mayConcern(ref, this.ctx.cwd, this.sessionId)) continue; // decided without opening its manifest
      if (!ref.trust.mine) continue; // a foreign tree is never adjudicated nor told (docs/subsystems/launch.md)
      try {
        const pending = await TASK_KINDS[ref.kind].notice(ref, session);
        if (pending.kind === "waiting") {
          waiting = true;
          if (pending.group !== undefined) waitingGroups.add(pending.group);
        } else if (pending.kind === "notice") await this.offer(pending.notice, false);
      } catch {
        // a task whose files cannot be read is reported by bg_result, not here
      }
    }
    // Every member on disk was looked at: a group whose members all ended gets its one notice now.
    this.waitingGroups = waitingGroups;
    for (const group of [...this.groups.keys()]) await this.flushGroup(group);
    clearTimeout(this.recheck);
    if (waiting && !this.closed) {
      this.recheck = setTimeout(() => void this.deliverPending().catch(() => {}), RECHECK_MS);
      this.recheck.unref();
    }
  }

  private async onEnd(event: TaskEvent): Promise<void> {
    if (event.kind === "fusion") return this.offer(runNotice(event.end, this.ctx.cwd), true);
    const { manifest, verified } = event.end;
    const dir = getRegistry().known.get(manifest.task_id);
    if (dir !== undefined)
      await this.offer(
        delegateNotice(dir, manifest, () => verified, this.answerText),
        true,
      );
  }

  /**
   * A notice of work of its own is sent; a member's is held for its group's one notice, sent now
   * (`flush`) when no member of the group runs any more (docs/tools/bg_delegate.md, "Groups").
   */
  private async offer(notice: Notice, flush: boolean): Promise<void> {
    if (notice.group === undefined) return this.send(notice);
    if (this.closed || notice.sessionId !== this.sessionId) return;
    const members = this.groups.get(notice.group.id) ?? new Map<string, Notice>();
    members.set(notice.id, notice);
    this.groups.set(notice.group.id, members);
    if (flush) await this.flushGroup(notice.group.id);
  }

  /** The group's one notice, once none of its members runs here or (as last looked) elsewhere. */
  private async flushGroup(groupId: string): Promise<void> {
    const registry = getRegistry();
    if (this.closed || registry.runsGroup(groupId) || this.waitingGroups.has(groupId)) return;
    const held = this.groups.get(groupId);
    this.groups.delete(groupId);
    const members = [...(held?.values() ?? [])].filter((m) => !registry.notified.has(m.id));
    const group = members[0]?.group;
    if (group === undefined || !members.some((m) => m.wanted)) return;
    await this.send(groupNotice(group, members));
  }

  /** Send one notice to this session if it is this session's, wanted, and not sent by this host yet. */
  private async send(notice: Notice | GroupNotice): Promise<void> {
    if (this.closed || notice.sessionId !== this.sessionId || !notice.wanted) return;
    const registry = getRegistry();
    const told = "members" in notice ? notice.members : [notice];
    if (told.some((m) => registry.notified.has(m.id))) return;
    for (const m of told) registry.notified.add(m.id);
    // Nothing was said (a member cannot be composed, or the runtime went stale): the next session start tries again.
    const untell = () => {
      for (const m of told) registry.notified.delete(m.id);
    };
    let message: Awaited<ReturnType<Notice["compose"] | GroupNotice["compose"]>>;
    try {
      message = await notice.compose();
    } catch {
      untell();
      return;
    }
    const { content, details } = message;
    if (this.closed) return untell();
    try {
      this.pi.sendMessage(
        { customType: NOTIFICATION_CUSTOM_TYPE, content, display: true, details },
        // A cancel the person issued is news to the model, not a reason to run it now.
        { deliverAs: "followUp", triggerTurn: notice.trigger && !told.every((m) => registry.quiet.has(m.id)) },
      );
      const each = details.kind === "group" ? details.members : [details];
      for (const m of told) {
        this.held.set(m.id, m.dir);
        m.markNotified();
        // The answer rode in the notice: the agent has read it (a prune may take the tree).
        if (each.find((d) => d.taskId === m.id)?.auto_delivered === "answer") writeAnswerRead(m.dir, m.id);
      }
    } catch {
      untell();
    }
  }
}
