/**
 * A task's result in the shape of Parallel's task-run retrieval API (docs/cli.md, "The result
 * document"): `{run, output}`, what `result --json` prints and what `show --json` adds, so a client
 * written for that API (its TypeScript SDK's `TaskRunResult`) reads ours unchanged. `run` carries the
 * API's field names: `run_id` and `interaction_id` (both our id, the value a follow-up passes as
 * `previousTaskId`), `status` from its enum, `is_active`, `processor` (the pinned route),
 * `created_at`, `modified_at`, `error` (`ref_id` our failure code, `message` our text), `warnings`
 * and `metadata`. Each citation of `output.basis` carries the API's `url` (a `file:` URL with a
 * `#L<start>-L<end>` fragment), `title` and `excerpts` beside our own fields.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { FinalizedBy } from "../core/constants.ts";
import type { EvidenceFreshness } from "../core/types.ts";
import type { FieldAgreement } from "../fusion/index.ts";
import type { RowState } from "../tasks/row.ts";
import type { CheckedCitation, CheckedFieldBasis, TaskOutput } from "../verify/structured-output.ts";
import type { TextCitation, TextFieldBasis } from "../verify/text-basis.ts";

/** The API's run statuses (its enum, in its order). */
export const RUN_STATUSES = [
  "queued",
  "action_required",
  "running",
  "completed",
  "failed",
  "cancelling",
  "cancelled",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * Our state as the API's status. `ended` (the process that ran it is gone and its outcome is not yet
 * decided from its files: `result` or `bg_result` decides it) is `action_required`; a tree that
 * cannot be read, or a foreign one (docs/cli.md), is `failed`.
 */
export const STATUS_OF: Record<RowState, RunStatus> = {
  running: "running",
  ended: "action_required",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  unreadable: "failed",
  foreign: "failed",
};

export interface RunWarning {
  type: "warning";
  message: string;
  detail: Record<string, unknown> | null;
}

export interface ParallelRun {
  run_id: string;
  interaction_id: string;
  status: RunStatus;
  /** True while the status is running, queued or cancelling (the API's rule). */
  is_active: boolean;
  /** The pinned route, `provider/model` (a Fusion run: its merger's route, else `fusion:<workflow>`). */
  processor: string;
  created_at: string | null;
  modified_at: string | null;
  /** `ref_id` is our failure code, `message` our failure text; null when the task did not fail. */
  error: { message: string; ref_id: string; detail: Record<string, unknown> | null } | null;
  warnings: RunWarning[] | null;
  metadata: Record<string, string | number | boolean> | null;
}

/** A citation with the API's fields (`url`, `title`, `excerpts`) beside ours. */
export type ParallelCitation = (CheckedCitation | TextCitation) & {
  url: string;
  title: string;
  excerpts: string[];
};

export type ParallelFieldBasis = Omit<CheckedFieldBasis | TextFieldBasis, "citations"> & {
  citations: ParallelCitation[];
};

export type ParallelOutput =
  | { type: "json"; content: Record<string, unknown>; basis: ParallelFieldBasis[]; agreement?: FieldAgreement[] }
  | { type: "text"; content: string; basis: ParallelFieldBasis[] };

export interface ParallelResult {
  run: ParallelRun;
  output: ParallelOutput;
}

/** What `run` is built from. */
export interface RunFacts {
  id: string;
  /** Ours, as the API's user metadata: the task's kind and its name (a Fusion run: its workflow). */
  metadata: { kind: "delegate" | "fusion"; name: string };
  state: RowState;
  processor: string;
  created_at: string | null;
  ended_at: string | null;
  failure: { code: string; message: string; remediation: string } | null;
  warnings: string[];
}

export function parallelRun(f: RunFacts): ParallelRun {
  const status = STATUS_OF[f.state];
  return {
    run_id: f.id,
    interaction_id: f.id,
    status,
    is_active: status === "running" || status === "queued" || status === "cancelling",
    processor: f.processor,
    created_at: f.created_at,
    modified_at: f.ended_at ?? f.created_at,
    error:
      f.failure === null
        ? null
        : { message: f.failure.message, ref_id: f.failure.code, detail: { remediation: f.failure.remediation } },
    warnings: f.warnings.map((message) => ({ type: "warning", message, detail: null })),
    metadata: { ...f.metadata },
  };
}

/** The `file:` URL of lines `start`-`end` of `path` (resolved from the project root `cwd`). */
export function citationUrl(cwd: string, path: string, start: number, end: number): string {
  return `${pathToFileURL(resolve(cwd, path)).href}#L${start}-L${end}`;
}

function withUrls(basis: readonly (CheckedFieldBasis | TextFieldBasis)[], cwd: string): ParallelFieldBasis[] {
  return basis.map((b) => ({
    ...b,
    citations: b.citations.map(
      (c): ParallelCitation => ({
        ...c,
        url: citationUrl(cwd, c.path, c.start_line, c.end_line),
        title: c.path,
        excerpts: c.excerpt === null ? [] : [c.excerpt],
      }),
    ),
  }));
}

/** A Fusion run's output, as `fusionOutput` gives it (content always present). */
export type FusionOutputLike =
  | { type: "json"; content: Record<string, unknown> | null; basis: CheckedFieldBasis[]; agreement: FieldAgreement[] }
  | { type: "text"; content: string; basis: [] };

/** The output in the API's shape; null when its content is not included (delivered as a file). */
export function parallelOutput(output: TaskOutput | FusionOutputLike, cwd: string): ParallelOutput | null {
  if (output.content === null) return null;
  if (output.type === "text") return { type: "text", content: output.content, basis: withUrls(output.basis, cwd) };
  const json: ParallelOutput = { type: "json", content: output.content, basis: withUrls(output.basis, cwd) };
  return "agreement" in output ? { ...json, agreement: output.agreement } : json;
}

/**
 * Warnings of a completed answer: a limit that told the delegate to answer, files read that changed
 * since, fields whose basis is flagged.
 */
export function answerWarnings(
  basis: readonly Pick<CheckedFieldBasis | TextFieldBasis, "field" | "status">[],
  finalizedBy: FinalizedBy | null,
  freshness: EvidenceFreshness | null,
): string[] {
  const changed = freshness === null ? [] : [...freshness.changed, ...freshness.vanished];
  const flagged = basis.filter((b) => b.status === "flagged").map((b) => b.field);
  return [
    ...(finalizedBy === null ? [] : [`the delegate was told to answer by a limit (finalized_by: ${finalizedBy})`]),
    ...(changed.length === 0 ? [] : [`files read changed since: ${changed.join(", ")}`]),
    ...(flagged.length === 0 ? [] : [`citations not verified for: ${flagged.join(", ")}`]),
  ];
}
