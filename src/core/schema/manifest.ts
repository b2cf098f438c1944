/**
 * manifest.json, a delegate task's record (docs/subsystems/retrieval.md, "Reading a task tree"): the
 * parent's record of the task, kept current for its life, checked against this closed declaration
 * before bg_result, `/delegates` or the command line touches a field — exactly the keys launch and the
 * parent's adjudication write, each of its type. A manifest with an unknown or renamed key, or a value
 * of another type (one flipped byte is enough), is refused as a whole by readManifest
 * (src/store/lookup.ts) instead of failing later, in whichever reader, as an untyped TypeError.
 * Its MAC, canonical JSON and state transitions are src/store's. Its route and a bound artifact are the
 * same shapes wherever another record names them.
 */
import { AUTO_DELIVER_MODES, CAPABILITIES, EXTENSION_MODES, FINALIZED_BY, SCHEMA } from "../constants.ts";
import { FAILURE_CODES } from "../errors.ts";
import { checkGroupSession } from "../group.ts";
import { keyPath, violation } from "../validate.ts";
import { TaskGroupSchema } from "./group.ts";
import {
  Amount,
  AnyString,
  Bool,
  Closed,
  Count,
  Dict,
  List,
  Nullable,
  OneOf,
  Refine,
  Sha256,
  type Static,
  Type,
} from "./kinds.ts";
import { OutputSchemaSchema } from "./shared.ts";
import { ManifestSteeringSchema } from "./steering.ts";

/**
 * true or false. kinds.ts has no boolean builder yet; Unsafe (which kinds.ts uses) builds the same
 * keyword under either TypeBox major.
 */

/** The artifacts launch binds (src/store/artifacts.ts): at most this many names. */
const MAX_ARTIFACTS = 64;

export const TASK_STATES = ["running", "completed", "failed", "cancelled"] as const;
export const TaskStateSchema = OneOf(TASK_STATES);
export type TaskState = Static<typeof TaskStateSchema>;

/** The provider and model a task is pinned to. */
export const PinnedRouteSchema = Closed({ provider: AnyString(), model: AnyString() });
export type PinnedRoute = Static<typeof PinnedRouteSchema>;

/**
 * The host a task's child runs on (docs/configuration.md, "Supported Pi versions"): its version, how
 * it was admitted, where its flags were read from and the host-specific flags the child got.
 */
export const ManifestHostSchema = Closed({
  pi_version: AnyString(),
  proof: OneOf(["proven", "self-proven"]),
  flags_from: OneOf(["parse_args", "help"]),
  host_flags: List(AnyString(), Number.MAX_SAFE_INTEGER),
});
export type ManifestHost = Static<typeof ManifestHostSchema>;

/** The limits the task was launched with. */
export const ManifestLimitsSchema = Closed({
  max_turns: Count(),
  max_tool_calls: Count(),
  timeout_seconds: Count(),
  /** The spend cap, present only when the task has one (seed.json's spend block enforces it). */
  max_cost_usd: Type.Optional(Amount()),
});

/** The process that launched the task: its pid and /proc start time. */
export const ManifestOwnerSchema = Closed({ pid: Count(), start_time: AnyString() });

/**
 * The child process: pid, process group and /proc start time (absent in manifests written before it
 * was recorded, docs/subsystems/retrieval.md; such a child is never judged alive by its pid alone).
 */
export const ManifestChildSchema = Closed({ pid: Count(), pgid: Count(), start_time: Type.Optional(AnyString()) });
export type ManifestChild = Static<typeof ManifestChildSchema>;

/** A file launch bound into the task tree: where, how long, and its bytes' SHA-256. */
export const BoundArtifactSchema = Closed({ path: AnyString(), byte_length: Count(), sha256: AnyString() });
export type BoundArtifact = Static<typeof BoundArtifactSchema>;

/** The artifacts launch bound, by name: at most MAX_ARTIFACTS. */
export const ManifestArtifactsSchema = Refine(
  Dict(BoundArtifactSchema),
  (artifacts, at) => {
    if (Object.keys(artifacts).length > MAX_ARTIFACTS) violation(at, `has more than ${MAX_ARTIFACTS} entries`);
  },
  `at most ${MAX_ARTIFACTS} entries`,
);

/** The parent's adjudication of the task: when it ended and how. */
export const ManifestTerminalSchema = Closed({
  ended_at: AnyString(),
  code: Type.Optional(OneOf(FAILURE_CODES)),
  message: Type.Optional(AnyString()),
  answer_bytes: Type.Optional(Count()),
  answer_sha256: Type.Optional(AnyString()),
  /** What the child spent, in dollars, as its provider reported it; absent when unknown. */
  cost_total: Type.Optional(Amount()),
  /**
   * True when cost_total may leave out a request: the child ended without committing its usage while
   * a request may have been in flight, unbilled in the figure (a cancel, a timeout, a crash). Every
   * view then says "at least" (src/views/spend-figure.ts); absent otherwise.
   */
  cost_at_least: Type.Optional(Type.Literal(true)),
  /**
   * Which limit's runway told the child to answer (its verified result's finalized_by); absent when
   * none did, on a failure, and in trees adjudicated before this was recorded.
   */
  finalized_by: Type.Optional(OneOf(FINALIZED_BY)),
  /**
   * Under a spend cap, what the provider billed past a request's limits, in the sentence every view
   * prints (src/core/overbilling.ts overbilledSentence); absent when it billed as asked.
   */
  overbilled: Type.Optional(AnyString()),
  /** SHA-256 of the child's session file when the parent adjudicated the task; absent when there was none. */
  session_sha256: Type.Optional(AnyString()),
  /**
   * How many of the vouched steering messages reached the child (its verified result's, or for a
   * failure what it reported); absent when the task was never steered.
   */
  steering_delivered: Type.Optional(Count()),
});
export type ManifestTerminal = Static<typeof ManifestTerminalSchema>;

/**
 * manifest.json's follow_up block (docs/tools/bg_delegate.md, "Follow-ups"): the link to the task it
 * continues, how that task ended, where its tree is, and what was carried.
 */
export const ManifestFollowUpSchema = Closed({
  previous_task_id: AnyString(),
  previous_task_dir: AnyString(),
  /**
   * SHA-256 of the previous task's committed record: its result.json, or for a continuation its
   * child-terminal.json; null when it ended without either (a timeout or a cancel).
   */
  previous_result_sha256: Nullable(AnyString()),
  previous_session_sha256: AnyString(),
  /** "completed", or the code that stopped the previous task (a continuation). */
  previous_end: AnyString(),
  /** This task's place in its chain: 2 for the first follow-up. */
  chain_position: Count(2),
  /** Bytes of the previous session carried into this task's session (without its header line). */
  carried_session_bytes: Count(),
  /** The provider's reported tokens of the previous child's last request; null when it reported none. */
  carried_tokens: Nullable(Count()),
  /** Whether a fresh projection of the parent's conversation was sent with the prompt. */
  reseed: Bool(),
});
export type ManifestFollowUp = Static<typeof ManifestFollowUpSchema>;

/** settings_ignored: at most one line per setting key. */
const MAX_IGNORED_SETTINGS = 16;

/** manifest.json: the parent's record of the task, kept current for its life. */
export const DelegateManifestSchema = Refine(
  Closed({
    schema_version: Type.Literal(SCHEMA.manifest),
    kind: Type.Literal("delegate"),
    task_id: AnyString(),
    name: AnyString(),
    launch_nonce: AnyString(),
    parent_session_id: AnyString(),
    cwd: AnyString(),
    created_at: AnyString(),
    updated_at: AnyString(),
    state: TaskStateSchema,
    route: PinnedRouteSchema,
    /** Absent in trees written before host admission was recorded. */
    host: Type.Optional(ManifestHostSchema),
    capability: OneOf(CAPABILITIES),
    extension_mode: OneOf(EXTENSION_MODES),
    limits: ManifestLimitsSchema,
    auto_deliver: OneOf(AUTO_DELIVER_MODES),
    notify_on_completion: Bool(),
    trigger_on_completion: Bool(),
    child_session_id: AnyString(),
    child_session_dir: AnyString(),
    seed_sha256: AnyString(),
    seed_bytes: Count(),
    owner: ManifestOwnerSchema,
    child: Nullable(ManifestChildSchema),
    artifacts: ManifestArtifactsSchema,
    terminal: Nullable(ManifestTerminalSchema),
    /** The answer's shape, as admitted (the parent checks the answer against it); absent for a text answer. */
    output_schema: Type.Optional(OutputSchemaSchema),
    /**
     * The project settings launch ignored because only you may widen them, one line each
     * (docs/configuration.md, "Who may set what"); absent when none was.
     */
    settings_ignored: Type.Optional(List(AnyString(), MAX_IGNORED_SETTINGS)),
    /** A follow-up's link to the task it continues; absent for a first task. */
    follow_up: Type.Optional(ManifestFollowUpSchema),
    /**
     * SHA-256 of the launch's `key`, so a key record can be checked against the task it names
     * (docs/tools/bg_delegate.md, "Never launched twice"); absent for a launch without a key.
     */
    key_sha256: Type.Optional(Sha256()),
    /**
     * The steering messages this process wrote to steering.json (how many, the last one's hash): the
     * signed vouch for that record (docs/tools/bg_steer.md); absent when the task was never steered.
     */
    steering: Type.Optional(ManifestSteeringSchema),
    /**
     * The group it was launched in (docs/tools/bg_delegate.md, "Groups"); absent for a task of its own.
     * Its id must be the group of parent_session_id and its name (../group.ts, checkGroupSession).
     */
    group: Type.Optional(TaskGroupSchema),
    /**
     * This user's MAC of the other fields for this project (docs/subsystems/launch.md, "The store is
     * yours", src/store/tree-trust.ts); absent in trees written before it was recorded, and in shipped ones.
     */
    mac: Type.Optional(Sha256()),
  }),
  (manifest, at) => {
    if (manifest.group !== undefined)
      checkGroupSession(manifest.group, keyPath(at, "group"), manifest.parent_session_id);
  },
);
export type DelegateManifest = Static<typeof DelegateManifestSchema>;
