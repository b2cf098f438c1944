/**
 * One lifecycle for both kinds of background work (docs/INDEX.md, "Each kind's lifecycle"): what
 * every caller — bg_result, the session link, `/delegates`, the footer, the command line — asks of a
 * delegate task or a Fusion run goes through this interface. Its two implementations are
 * src/tasks/delegate-kind.ts and src/tasks/fusion-kind.ts; src/tasks/seam.ts picks one by the id.
 */
import type { TaskRef } from "../store/lookup.ts";
import type { CancelRecord } from "./cancel.ts";
import type { NoticeSession, PendingNotice } from "./notice.ts";
import type { RowContext, TaskRow } from "./row.ts";

/** Where one recorded as running stands once it was looked at. */
export type Adjudication<S> =
  /** Its owner still runs it (this process or another live one). */
  | { kind: "running" }
  /** Its owner is gone, but it cannot end yet (a run's children still run). */
  | { kind: "waiting" }
  /** It was adjudicated now, from its files. */
  | { kind: "settled"; end: S };

export interface TaskKind<M, S> {
  readonly kind: TaskRef["kind"];
  /** Its manifest, read and checked; a DelegateError when it cannot be trusted. */
  read(dir: string): Promise<M>;
  /** Whether one recorded as running is still running (held here, or its owner lives). */
  isRunning(manifest: M): boolean;
  /** Settle one recorded as running: adjudicated now when nothing runs it any more. */
  adjudicate(cwd: string, dir: string, manifest: M): Adjudication<S>;
  /** Its row as recorded (src/tasks/row.ts): for `/delegates` and the footer, every second. */
  row(ref: TaskRef, context: RowContext): TaskRow;
  /** Its row as checked now: an answer size and a cost only from files that pass bg_result's checks. */
  checkedRow(ref: TaskRef, now: number): Promise<TaskRow>;
  /**
   * What the one cancel (src/tasks/cancel.ts, through src/tasks/seam.ts `cancelTask`) reads of its
   * manifest to end it here, request it from its proven owner, or refuse.
   */
  cancelRecord(dir: string): CancelRecord;
  /**
   * Its completion notice, for the session link (src/tasks/link.ts) that finds it on disk ended while
   * no session of ours was live: settled first if it must be; nothing when it is not the session's.
   */
  notice(ref: TaskRef, session: NoticeSession): Promise<PendingNotice>;
}
