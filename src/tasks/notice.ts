/**
 * A completion notice, of either kind (docs/subsystems/retrieval.md, "The completion notice"): whom
 * it is for, whether it is wanted, and its message, composed only once the session link
 * (src/tasks/link.ts) decided to send it (autoDeliver verifies the answer then).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { ANSWER_READ_FILE, NOTIFICATION_CUSTOM_TYPE } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import type { TaskGroup } from "../core/group.ts";
import type { DelegateManifest } from "../core/types.ts";
import { answerReadValid, signedAnswerRead } from "../store/answer-read.ts";
import type { VerifiedAnswer } from "../verify/delegate-result.ts";
import type { JsonOutput } from "../verify/structured-output.ts";
import type { NotificationDetails } from "../views/notification.ts";

export interface Notice {
  id: string;
  dir: string;
  /** The session that started it. */
  sessionId: string;
  /** notifyOnCompletion. */
  wanted: boolean;
  /** triggerOnCompletion (a cancel the person issued never starts a turn). */
  trigger: boolean;
  /** Its group (its end is told in the group's one notice); undefined for work of its own. */
  group: TaskGroup | undefined;
  compose(): Promise<{ content: string; details: NotificationDetails }>;
  /** Record in its directory that the notice reached its session, so a prune may remove it (docs/cli.md, "prune"). */
  markNotified(): void;
}

/**
 * A delegate's verified answer as the model reads it inline (autoDeliver): the text, or a structured
 * answer's JSON and checked basis lines exactly as bg_result shows them, with the checked output for
 * the person's view (null for a text answer).
 */
export interface InlineAnswer {
  text: string;
  output: JsonOutput | null;
}

/**
 * How the notice gets its {@link InlineAnswer} (src/retrieval/retrieve.ts, `inlineAnswer`, handed in
 * by the extension: this layer does not import bg_result's views).
 */
export type AnswerText = (manifest: DelegateManifest, verified: VerifiedAnswer, taskDir: string) => InlineAnswer;

/** What the link knows of its session when it looks for notices of work that ended while none of ours was live. */
export interface NoticeSession {
  cwd: string;
  sessionId: string;
  /** Ids the session already holds a notice for. */
  seen: ReadonlySet<string>;
  answerText: AnswerText;
}

/** Of one task or run on disk: its notice, nothing to say, or look again (its owner still runs it, or its children). */
export type PendingNotice =
  | { kind: "notice"; notice: Notice }
  | { kind: "none" }
  /** Still running elsewhere: look again; its group (if any) waits for it. */
  | { kind: "waiting"; group: string | undefined };

/**
 * Record on disk (`notified.json`, unbound: no manifest lists it) that a notice reached its session,
 * so a prune may remove the tree (docs/cli.md, "prune"). Best effort: without it the tree is only
 * kept longer. `identity` names the task or run.
 */
export function writeNotified(path: string, identity: Record<string, string>): void {
  writeOnce(path, { ...identity, notified_at: new Date().toISOString() });
}

/**
 * Record in a task's or run's directory (`answer-read.json`, unbound) that the agent read how it
 * ended: bg_result returned it, or its notice carried the answer. Until then a prune keeps a completed
 * tree whose notice was delivered (docs/cli.md, "prune"). Best effort, like {@link writeNotified}.
 */
export function writeAnswerRead(dir: string, id: string): void {
  // Signed (src/store/answer-read.ts): prune believes only a mark of this user for this tree.
  if (answerReadValid(dir, id)) return;
  try {
    writeFileAtomic(
      join(dir, ANSWER_READ_FILE),
      `${JSON.stringify(signedAnswerRead(dir, id, new Date().toISOString()))}\n`,
    );
  } catch {
    // the tree is gone or read-only: nothing to prune later either
  }
}

function writeOnce(path: string, record: Record<string, string>): void {
  if (existsSync(path)) return;
  try {
    writeFileAtomic(path, `${JSON.stringify(record)}\n`);
  } catch {
    // the tree is gone or read-only: nothing to prune later either
  }
}

/**
 * The notices a session holds, id → the directory they name: the one scan of the session's
 * notification messages (the link makes it once, at session start).
 */
export function noticesInSession(ctx: ExtensionContext): Map<string, string | undefined> {
  const held = new Map<string, string | undefined>();
  for (const entry of ctx.sessionManager.getEntries()) {
    if (entry.type !== "custom_message" || entry.customType !== NOTIFICATION_CUSTOM_TYPE) continue;
    const d: unknown = entry.details;
    // A group's notice told each of its members (docs/tools/bg_delegate.md, "Groups").
    const told = typeof d === "object" && d !== null && "members" in d && Array.isArray(d.members) ? d.members : [d];
    for (const member of told) holdNotice(held, member);
  }
  return held;
}

function holdNotice(held: Map<string, string | undefined>, d: unknown): void {
  if (typeof d !== "object" || d === null || !("taskId" in d) || typeof d.taskId !== "string") return;
  held.set(d.taskId, "artifact_dir" in d && typeof d.artifact_dir === "string" ? d.artifact_dir : undefined);
}
