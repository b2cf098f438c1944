import { join } from "node:path";
import type { DelegateArguments } from "../arguments/delegate-arguments.ts";
import {
  AGGREGATE_TOOL_OUTPUT_MAX_BYTES,
  ANSWER_CAPTURE_MAX_BYTES,
  READ_ARTIFACT_MAX_RESPONSE_BYTES,
  SCHEMA,
  SPILL_THRESHOLD_BYTES,
  TASK_FILES,
} from "../core/constants.ts";
import { groupFor, groupRecord } from "../core/group.ts";
import { sha256Hex } from "../core/hash.ts";
import type { SeedSpend } from "../core/spend.ts";
import type {
  ChainArtifact,
  DelegateManifest,
  ManifestFollowUp,
  ManifestHost,
  SeedBudget,
  SeedDocument,
  SeedFollowUp,
  SeedRoute,
} from "../core/types.ts";
import { taskDirFor } from "../store/task-paths.ts";
import { newChildSessionId, newLaunchNonce, newTaskId } from "./ids.ts";

/** A manifest as launch writes it; the store adds the artifact paths and the seed's hash and size. */
export type LaunchManifest = Omit<DelegateManifest, "schema_version" | "artifacts" | "seed_sha256" | "seed_bytes">;

/** The identifiers and place of one new task (docs/subsystems/launch.md, "The artifact tree"). */
export interface TaskIdentity {
  taskId: string;
  launchNonce: string;
  childSessionId: string;
  parentSessionId: string;
  cwd: string;
  taskDir: string;
  createdAt: string;
}

export function newTaskIdentity(cwd: string, parentSessionId: string): TaskIdentity {
  const taskId = newTaskId();
  return {
    taskId,
    launchNonce: newLaunchNonce(),
    childSessionId: newChildSessionId(),
    parentSessionId,
    cwd,
    taskDir: taskDirFor(cwd, parentSessionId, taskId),
    createdAt: new Date().toISOString(),
  };
}

type SeedArguments = Pick<
  DelegateArguments,
  "prompt" | "outputSchema" | "capability" | "extensionMode" | "maxTurns" | "maxToolCalls" | "timeoutSeconds"
>;

export interface SeedInput {
  identity: TaskIdentity;
  args: SeedArguments;
  route: SeedRoute;
  /** projectConversation(...).projection */
  projection: unknown;
  budget: SeedBudget;
  /** The spend cap's block (src/launch/spend-plan.ts); undefined without a cap. */
  spend?: SeedSpend | undefined;
  /** The exact bytes of child-prompt.txt. */
  childPrompt: string;
  /** The system prompt passed with --system-prompt. */
  systemPrompt: string;
  /** A follow-up's link (docs/tools/bg_delegate.md, "Follow-ups"); undefined for a first task. */
  followUp?: SeedFollowUp | undefined;
  /** The granted read roots (bgDelegate.readRoots); none when undefined or empty. */
  readRoots?: readonly string[] | undefined;
  /** A follow-up's readable spill files of its verified chain (docs/tools/bg_delegate.md, "Follow-ups"). */
  chainArtifacts?: ChainArtifact[] | undefined;
}

/** seed.json (docs/subsystems/launch.md, "The artifact tree"): what the guard enforces, hash-bound. */
export function buildSeed(input: SeedInput): SeedDocument {
  const { identity, args } = input;
  return {
    schema_version: SCHEMA.seed,
    task_id: identity.taskId,
    launch_nonce: identity.launchNonce,
    created_at: identity.createdAt,
    cwd: identity.cwd,
    capability: args.capability,
    extension_mode: args.extensionMode,
    route: input.route,
    child_session_id: identity.childSessionId,
    directive: { text: args.prompt, sha256: sha256Hex(args.prompt), authority: "explicit_text" },
    projection: input.projection,
    limits: {
      max_turns: args.maxTurns,
      max_tool_calls: args.maxToolCalls,
      timeout_seconds: args.timeoutSeconds,
      spill_threshold_bytes: SPILL_THRESHOLD_BYTES,
      aggregate_tool_output_bytes: AGGREGATE_TOOL_OUTPUT_MAX_BYTES,
      answer_capture_bytes: ANSWER_CAPTURE_MAX_BYTES,
      read_artifact_max_response_bytes: READ_ARTIFACT_MAX_RESPONSE_BYTES,
    },
    budget: input.budget,
    ...(input.spend === undefined ? {} : { spend: input.spend }),
    child_prompt_sha256: sha256Hex(input.childPrompt),
    system_prompt_sha256: sha256Hex(input.systemPrompt),
    output_schema: args.outputSchema ?? null,
    ...(input.followUp === undefined ? {} : { follow_up: input.followUp }),
    ...(input.readRoots === undefined || input.readRoots.length === 0 ? {} : { read_roots: [...input.readRoots] }),
    ...(input.chainArtifacts === undefined || input.chainArtifacts.length === 0
      ? {}
      : { chain_artifacts: input.chainArtifacts }),
  };
}

export interface ManifestInput {
  identity: TaskIdentity;
  args: DelegateArguments;
  spend?: SeedSpend | undefined;
  route: { provider: string; model: string };
  /** The parent process that owns the task (pid and /proc start time). */
  owner: { pid: number; start_time: string };
  host: ManifestHost;
  /** Project settings ignored at launch (src/core/settings.ts `ignored`). */
  settingsIgnored?: string[];
  /** A follow-up's link and what it carried; undefined for a first task. */
  followUp?: ManifestFollowUp | undefined;
}

/** manifest.json as launch first writes it: running, no child yet (docs/subsystems/retrieval.md, "The artifact tree is the record"). */
export function buildManifest(input: ManifestInput): LaunchManifest {
  const { identity, args } = input;
  return {
    kind: "delegate",
    task_id: identity.taskId,
    name: args.name,
    launch_nonce: identity.launchNonce,
    parent_session_id: identity.parentSessionId,
    cwd: identity.cwd,
    created_at: identity.createdAt,
    updated_at: identity.createdAt,
    state: "running",
    route: { provider: input.route.provider, model: input.route.model },
    host: input.host,
    capability: args.capability,
    extension_mode: args.extensionMode,
    limits: {
      max_turns: args.maxTurns,
      max_tool_calls: args.maxToolCalls,
      timeout_seconds: args.timeoutSeconds,
      ...(input.spend === undefined ? {} : { max_cost_usd: input.spend.cap_usd }),
    },
    auto_deliver: args.autoDeliver,
    notify_on_completion: args.notifyOnCompletion,
    trigger_on_completion: args.triggerOnCompletion,
    child_session_id: identity.childSessionId,
    child_session_dir: join(identity.taskDir, TASK_FILES.sessionDir),
    owner: input.owner,
    child: null,
    terminal: null,
    ...(args.outputSchema === undefined ? {} : { output_schema: args.outputSchema }),
    ...(input.settingsIgnored === undefined || input.settingsIgnored.length === 0
      ? {}
      : { settings_ignored: input.settingsIgnored }),
    ...(input.followUp === undefined ? {} : { follow_up: input.followUp }),
    ...(args.key === undefined ? {} : { key_sha256: sha256Hex(args.key) }),
    ...groupRecord(groupFor(identity.parentSessionId, args.group, args.groupMaxCostUsd)),
  };
}
