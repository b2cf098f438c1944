/** Every number and fixed name of the contract, in one place (the pages of docs/, see docs/INDEX.md). */

export const KiB = 1024;
export const MiB = 1024 * KiB;

// Delivery and capture (docs/tools/bg_result.md, "Delivery"; docs/tools/bg_delegate.md, "Limits")
export const INLINE_ANSWER_MAX_BYTES = 48 * KiB;
/** The inline limit as the tools' texts say it ("48 KiB"), from the constant. */
export const INLINE_LIMIT_TEXT = `${INLINE_ANSWER_MAX_BYTES / KiB} KiB`;
export const ANSWER_CAPTURE_MAX_BYTES = 4 * MiB;
export const ANSWER_BLOCK_BYTES = 256 * KiB;
export const SPILL_THRESHOLD_BYTES = 64 * KiB;
/** A runway-spilled text keeps a head inline only when at least this many bytes of whole lines fit. */
export const RUNWAY_HEAD_MIN_BYTES = 1 * KiB;
export const AGGREGATE_TOOL_OUTPUT_MAX_BYTES = 64 * MiB;
export const READ_ARTIFACT_MAX_RESPONSE_BYTES = 60 * KiB;
/**
 * Largest child-written JSON file (result.json, child-terminal.json) the parent reads whole: a
 * 4 MiB answer is ~5.6 MB of base64, plus receipts and evidence rows for up to 10,000 tool calls.
 */
export const CHILD_FILE_MAX_BYTES = 64 * MiB;
/**
 * Largest small record of a task tree the parent reads whole (manifest.json, progress.json,
 * budget-plan.json): each is a few KiB; a bigger one is refused before it is read.
 */
export const TASK_RECORD_MAX_BYTES = 1 * MiB;
/**
 * Largest file a child's guard reads back to record a read's or a grep's evidence
 * (docs/subsystems/child-guard.md, "Evidence"): a larger one gets no row, so citations of it count
 * as unread.
 */
export const EVIDENCE_FILE_MAX_BYTES = 256 * MiB;
/** Bytes around the base64 payload of one delegate_read_artifact response (header line). */
export const READ_ARTIFACT_FRAMING_BYTES = 256;

// Evidence at bg_result (docs/subsystems/retrieval.md, "Evidence")
/** Files whose read ranges are hashed again per check; more are counted as unchecked. */
export const EVIDENCE_CHECK_MAX_FILES = 64;
/** Bytes read back per check over all files; a file that would pass it is unchecked. */
export const EVIDENCE_CHECK_MAX_BYTES = 16 * MiB;
/** Line ranges one grep evidence row keeps of the lines its output showed; later ones are not kept. */
export const GREP_SEEN_MAX_RANGES = 128;
/** Citations of the answer looked at; more are not counted. */
export const CITATION_CHECK_MAX = 500;
/** Flagged citations named in a view; the counts cover the rest. */
export const CITATION_FLAGGED_SHOWN = 3;
/** Changed or vanished files named in a view; the count covers the rest. */
export const STALE_FILES_SHOWN = 3;

// Budget (docs/subsystems/launch.md, "The budget"), tokens
export const RESERVE_OUTPUT_TOKENS = 16_384;
export const RESERVE_FRAMING_TOKENS = 8_192;
export const RESERVE_SAFETY_TOKENS = 4_096;
export const FINALIZATION_RUNWAY_TOKENS = 32_768;
export const LOW_RUNWAY_TRIGGER_TOKENS = 8_192;
export const MIN_USABLE_INPUT_TOKENS = 8_192;
/** pi appends "Current date" and "Current working directory" lines to the system prompt. */
export const SYSTEM_PROMPT_APPENDIX_BYTES = 512;
export const PROVABLE_BYTES_PER_TOKEN = 1.0;

/** The limits whose runway can force a finalization (docs/subsystems/child-guard.md, "During the run"). */
export const FINALIZED_BY = ["context", "turns", "tool_calls", "time", "cost"] as const;
export type FinalizedBy = (typeof FINALIZED_BY)[number];
/** The time runway: finalize this long before timeoutSeconds, max(10 s, 10 %), at most half the timeout. */
export function timeRunwayMs(timeoutSeconds: number): number {
  return Math.min(timeoutSeconds * 500, Math.max(10_000, timeoutSeconds * 100));
}
export const CALIBRATION_MIN_PROMPT_BYTES = 50 * KiB;

// The spend cap (docs/subsystems/child-guard.md, "The spend cap"), tokens
/**
 * The least output an answer request is given under a cap, and the least a tool turn is sent with:
 * the cap always keeps one answer request of this output in reserve (src/core/spend.ts).
 */
export const SPEND_ANSWER_OUTPUT_TOKENS = 2_048;
/**
 * Fusion's share of one run cap (docs/subsystems/fusion.md, "The spend cap"): the evaluator and the
 * merger each keep this fraction of the cap, in hundredths; the candidates share the rest equally.
 */
export const FUSION_REVIEW_SHARE_X100 = 20;

// Argument defaults and bounds (docs/tools/bg_delegate.md and docs/tools/bg_result.md, "Arguments")
export const DELEGATE_DEFAULTS = {
  capability: "inspect",
  extensionMode: "isolated",
  maxTurns: 24,
  maxToolCalls: 120,
  timeoutSeconds: 1200,
  autoDeliver: "never",
  notifyOnCompletion: true,
  triggerOnCompletion: true,
} as const;

/** bg_fusion's defaults (docs/tools/bg_fusion.md, "Arguments"): a delegate's, applied to every child. */
export const FUSION_DEFAULTS = {
  maxTurns: DELEGATE_DEFAULTS.maxTurns,
  maxToolCalls: DELEGATE_DEFAULTS.maxToolCalls,
  timeoutSeconds: DELEGATE_DEFAULTS.timeoutSeconds,
  autoDeliver: DELEGATE_DEFAULTS.autoDeliver,
  notifyOnCompletion: DELEGATE_DEFAULTS.notifyOnCompletion,
  triggerOnCompletion: DELEGATE_DEFAULTS.triggerOnCompletion,
} as const;

/** How many candidate routes a Fusion run asks (docs/tools/bg_fusion.md, "Arguments"). */
export const FUSION_CANDIDATES = { min: 2, max: 4 } as const;
/** The workflow name bg_fusion's runs carry in their manifest. */
export const FUSION_WORKFLOW = "bg-fusion";

export const ARGUMENT_BOUNDS = {
  nameMaxChars: 80,
  /** bg_delegate's and bg_fusion's `key` (docs/tools/bg_delegate.md, "Never launched twice"). */
  keyMaxChars: 200,
  promptMaxBytes: 1 * MiB,
  maxTurns: 1_000,
  maxToolCalls: 10_000,
  timeoutSeconds: 86_400,
  /** maxCostUsd: a spend cap above this many US dollars is refused (docs/tools/bg_delegate.md, "Arguments"). */
  maxCostUsd: 10_000,
  taskIdMaxChars: 128,
} as const;

export const CAPABILITIES = ["inspect"] as const;
export const EXTENSION_MODES = ["isolated", "ambient"] as const;
export const AUTO_DELIVER_MODES = ["never", "when_small", "always"] as const;
export const DELIVERY_MODES = ["inline", "artifact"] as const;
export type Capability = (typeof CAPABILITIES)[number];
export type ExtensionMode = (typeof EXTENSION_MODES)[number];
export type AutoDeliver = (typeof AUTO_DELIVER_MODES)[number];
export type DeliveryMode = (typeof DELIVERY_MODES)[number];

/** The inspect capability's tool set, the only tools a child may call. */
export const CHILD_TOOLS = ["read", "grep", "find", "ls", "delegate_read_artifact"] as const;
export const CHILD_BUILTIN_TOOLS = ["read", "grep", "find", "ls"] as const;
export const READ_ARTIFACT_TOOL = "delegate_read_artifact";

// Registry (docs/configuration.md, "Configuration"; docs/subsystems/retrieval.md, "The completion notice")
export const DEFAULT_MAX_RUNNING = 4;
/** Ended task trees older than this many days are pruned at session start; 0 turns it off (docs/configuration.md). */
export const DEFAULT_RETENTION_DAYS = 30;
export const NOTIFICATION_CUSTOM_TYPE = "background-task-notification";
export const SETTINGS_KEY = "bgDelegate";

// Schema versions of what we write; the two view versions are exact in the spec.
export const SCHEMA = {
  seed: "pi-bg-delegate.seed.v1",
  ledger: "pi-bg-delegate.omission-ledger.v1",
  budgetPlan: "pi-bg-delegate.budget-plan.v1",
  manifest: "pi-bg-delegate.manifest.v1",
  ready: "pi-bg-delegate.child-ready.v1",
  result: "pi-bg-delegate.result.v1",
  terminal: "pi-bg-delegate.child-terminal.v1",
  runtimeBudget: "pi-bg-delegate.runtime-budget.v1",
  outcome: "pi-bg-delegate.outcome.v1",
  spillReceipt: "pi-bg-delegate.spill-receipt.v1",
  spillEnvelope: "pi-bg-delegate.tool-result-content.v1",
  delegateView: "pi-background-tasks.delegate-result-view.v1",
  fusionView: "pi-background-tasks.fusion-result-view.v1",
  fusionManifest: "pi-bg-delegate.fusion-manifest.v1",
  selfProof: "pi-bg-delegate.host-self-proof.v3",
  fusionResult: "pi-bg-delegate.fusion-result.v1",
  fusionDetails: "pi-bg-delegate.fusion-details.v2",
  fusionFailureSummary: "pi-bg-delegate.fusion-failure-summary.v1",
  fusionUsageClaim: "pi-bg-delegate.fusion-usage-claim.v1",
  delegateUsageClaim: "pi-bg-delegate.delegate-usage-claim.v1",
  steering: "pi-bg-delegate.steering.v1",
  steeringSeen: "pi-bg-delegate.steering-seen.v1",
  launchKey: "pi-bg-delegate.launch-key.v1",
  fusionRun: "pi-bg-delegate.fusion-run.v1",
  fusionChild: "pi-bg-delegate.fusion-child.v1",
  fusionEvaluation: "pi-bg-delegate.fusion-evaluation.v1",
} as const;

export const PROJECTION_TRANSFORM = "visible-conversation-ledger-v2";

/**
 * Written by a cancel from another process into a delegate's or a run's directory (docs/cli.md,
 * "cancel"); the owner then ends it as cancelled.
 */
export const CANCEL_REQUEST_FILE = "cancel-request.json";
/**
 * Written (unbound, like notified.json) once the agent read the task's or run's answer: bg_result
 * returned how it ended, or its notice carried the answer. A prune keeps a completed, notified tree
 * without it (docs/cli.md, "prune").
 */
export const ANSWER_READ_FILE = "answer-read.json";

/** Files of a delegate task directory. */
export const TASK_FILES = {
  seed: "seed.json",
  prompt: "child-prompt.txt",
  ledger: "context-omission-ledger.json",
  budgetPlan: "budget-plan.json",
  manifest: "manifest.json",
  sessionDir: "child-session",
  sessionFile: "child-session/session.jsonl",
  spillDir: "spill",
  ready: "child-ready.json",
  progress: "progress.json",
  runtimeBudget: "runtime-budget.json",
  result: "result.json",
  terminal: "child-terminal.json",
  outcome: "outcome.json",
  cancelRequest: CANCEL_REQUEST_FILE,
  /** Written once the completion notice reached the parent's session (docs/cli.md, "prune"). */
  notified: "notified.json",
  answerRead: ANSWER_READ_FILE,
  output: "child-output.log",
  answer: "answer.txt",
  /** A structured answer that still did not conform after the repair turn, kept raw (child_output_invalid). */
  invalidAnswer: "answer-invalid.txt",
  /** A final answer cut at the model's output limit, kept as a partial (child_model_output_limit). */
  partialAnswer: "answer-partial.txt",
  /** Created once by the bg_result that put the task's usage in Pi's books (src/store/usage-claim.ts). */
  usageClaim: "usage-claim.json",
  /** The parent's hash-chained steering messages (docs/tools/bg_steer.md, "The steering record"). */
  steering: "steering.json",
  /** The guard's account of the steering it delivered so far (a display aid; result.json binds it). */
  steeringSeen: "steering-seen.json",
} as const;

// Steering a running delegate (docs/tools/bg_steer.md, "Limits")
/** The largest steering message, in bytes of UTF-8. */
export const STEER_MESSAGE_MAX_BYTES = 4 * KiB;
/** The most steering messages one delegate takes. */
export const STEER_MAX_PER_TASK = 8;

/**
 * The most tasks one chain of follow-ups holds, the first task included (docs/tools/bg_delegate.md,
 * "Follow-ups"): a follow-up that would be later is refused, and every walk of a chain (bg_result,
 * show, list, prune) stops there; a longer recorded chain is follow_up_chain_invalid.
 */
export const FOLLOW_UP_CHAIN_MAX = 64;

/** Roots under the project cwd. */
export const DELEGATE_ROOT = ".pi/delegate";
export const FUSION_ROOT = ".pi/fusion";
/** The key (Symbol.for) of what a Pi process did with the package, on globalThis (src/process-state.ts). */
export const PROCESS_STATE_KEY = "pi-bg-delegate.process.v1";
/** The least time between two prunes a session start runs in one project (docs/configuration.md, "Retention"). */
export const PRUNE_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** Fixed files of a Fusion run directory (src/fusion/); every other artifact is named by the runner. */
export const FUSION_FILES = {
  manifest: "manifest.json",
  result: "result.json",
  merged: "merged.md",
  failureSummary: "failure-summary.json",
  failureMessage: "failure-message.txt",
  usageClaim: "usage-claim.json",
  /** Written (unbound) once the run's notice reached its session; prune waits for it (docs/cli.md, "prune"). */
  notified: "notified.json",
  answerRead: ANSWER_READ_FILE,
  /** Unbound, like notified.json. */
  cancelRequest: CANCEL_REQUEST_FILE,
} as const;

// Fusion bounds (docs/subsystems/fusion.md, "The run directory", "The writer", "A failed or cancelled run")
export const FUSION_FAILURE_VIEW_MAX_BYTES = 8 * KiB;
/** A failure message up to this size rides inline in failure-summary.json; a longer one is its own artifact. */
export const FUSION_INLINE_MESSAGE_MAX_BYTES = 2 * KiB;
export const FUSION_MAX_ARTIFACTS = 64;
export const FUSION_MAX_ATTEMPTS = 32;
/** Cap on manifest.json, result.json and failure-summary.json; read before parsing. */
export const FUSION_DOCUMENT_MAX_BYTES = 64 * KiB;
export const FUSION_MERGED_MAX_BYTES = ANSWER_CAPTURE_MAX_BYTES;

/** Environment handed to the child (docs/subsystems/launch.md, "Environment and credentials"). */
export const CHILD_ENV = {
  taskDir: "PI_BG_DELEGATE_TASK_DIR",
  taskId: "PI_BG_DELEGATE_TASK_ID",
  nonce: "PI_BG_DELEGATE_LAUNCH_NONCE",
  seedSha256: "PI_BG_DELEGATE_SEED_SHA256",
  marker: "PI_BG_DELEGATE_CHILD",
  /** "1": the child outlives its parent (bgDelegate.onExit "finish") and keeps its own deadline. */
  outlive: "PI_BG_DELEGATE_OUTLIVE_PARENT",
} as const;
export const PI_CLI_ENV = "PI_BG_DELEGATE_PI_CLI";
export const MAX_RUNNING_ENV = "PI_BG_DELEGATE_MAX_RUNNING";
export const RETENTION_DAYS_ENV = "PI_BG_DELEGATE_RETENTION_DAYS";
export const MAX_COST_USD_ENV = "PI_BG_DELEGATE_MAX_COST_USD";
export const SELF_PROOF_ENV = "PI_BG_DELEGATE_SELF_PROOF";
export const NON_INTERACTIVE_ENV = "PI_BG_DELEGATE_NON_INTERACTIVE";
export const ON_EXIT_ENV = "PI_BG_DELEGATE_ON_EXIT";
/** bgDelegate.onExit: what quitting Pi does to running delegates (docs/configuration.md, "Quitting Pi"). */
export const ON_EXIT_CHOICES = ["cancel", "finish"] as const;
export type OnExitChoice = (typeof ON_EXIT_CHOICES)[number];
/** Directories a delegate may read beyond the project, path-delimiter separated (docs/configuration.md). */
export const READ_ROOTS_ENV = "PI_BG_DELEGATE_READ_ROOTS";
/** At most this many granted read roots (a longer list is skipped as malformed). */
export const READ_ROOTS_MAX = 64;
/** What `pi -p` / `--mode json` does with its delegates when its prompt is done (docs/configuration.md). */
export const NON_INTERACTIVE_CHOICES = ["wait", "cancel"] as const;
export type NonInteractiveChoice = (typeof NON_INTERACTIVE_CHOICES)[number];

/**
 * How often a child guard checks that its parent process still exists (docs/subsystems/child-guard.md,
 * "During the run").
 */
export const PARENT_WATCH_INTERVAL_MS = 500;
