/**
 * bg_fusion's admission and launch (docs/tools/bg_fusion.md; docs/subsystems/fusion.md, "The run"):
 * candidates (argument or setting), capacity for all of them, every route pinned, one snapshot of the
 * parent, every candidate admitted; only then the run directory, run.json and the children. The
 * receipt returns at once; the pipeline runs on in this process.
 */
import { rmSync } from "node:fs";
import { type ExtensionContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import type { FusionArguments } from "../arguments/fusion-arguments.ts";
import { canonicalJsonLine } from "../core/canonical.ts";
import { FUSION_WORKFLOW, SCHEMA } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { groupFor, groupRecord } from "../core/group.ts";
import { sha256Hex } from "../core/hash.ts";
import type { PinnedRoute } from "../core/types.ts";
import { writeFailure } from "../core/write-failure.ts";
import { createRun } from "../fusion/index.ts";
import { type FusionRunRecord, RUN_RECORD_PATH } from "../fusion/run-record.ts";
import { launchStep, requireCapacity } from "../launch/admission-step.ts";
import { requireGroupRoom, resolveGroupCap } from "../launch/group-cap.ts";
import { type HostFacts, type ParentSnapshot, snapshotParent } from "../launch/launch.ts";
import {
  alreadyStartedDetails,
  type ExistingLaunch,
  findKeyedLaunch,
  recordKeyReceipt,
} from "../launch/launch-keys.ts";
import { type ResolvedRoute, resolveRoute } from "../launch/route.ts";
import { requireOutputLimit, requirePriced, resolveSpendCap } from "../launch/spend-plan.ts";
import { requireStoreTrusted } from "../store/store-trust.ts";
import { sessionDirFor } from "../store/task-paths.ts";
import { liveRunSpend } from "../tasks/fusion-end.ts";
import type { LiveRun } from "../tasks/live.ts";
import { getRegistry } from "../tasks/registry.ts";
import { emptyRunUsage } from "../tasks/run-usage.ts";
import { type AlreadyStartedDetails, alreadyStartedText } from "../views/already-started.ts";
import { admitChild, type ChildEnd, type ChildSeat, launchChild } from "./children.ts";
import { runPipeline } from "./pipeline.ts";
import { type FusionReceiptDetails, fusionReceiptText } from "./receipt.ts";
import { shareRunCap } from "./spend-share.ts";

const DEFAULT_NAME_CHARS = 48;

function candidateRoutes(args: FusionArguments, host: HostFacts): PinnedRoute[] {
  if (args.candidates !== undefined) return args.candidates;
  const setting = host.settings.fusionCandidates;
  if (setting !== undefined && "routes" in setting) return setting.routes;
  const why = setting === undefined ? "bgDelegate.fusion.candidates is not set" : setting.problem;
  throw new DelegateError("fusion_candidates_unset", `no candidates were passed and ${why}`, {
    childProcessCreated: false,
  });
}

function defaultName(prompt: string): string {
  const line = prompt.replace(/\s+/g, " ").trim();
  const chars = [...line];
  return chars.length <= DEFAULT_NAME_CHARS ? line : `${chars.slice(0, DEFAULT_NAME_CHARS).join("")}…`;
}

/** The run record's output_schema: present only for a run with an outputSchema. */
function schemaOf(args: FusionArguments): Pick<FusionRunRecord, "output_schema"> {
  return args.outputSchema === undefined ? {} : { output_schema: args.outputSchema };
}

export interface FusionStart {
  text: string;
  details: FusionReceiptDetails | AlreadyStartedDetails;
}

export async function startFusion(
  args: FusionArguments,
  toolCallId: string,
  ctx: ExtensionContext,
  host: HostFacts,
): Promise<FusionStart> {
  const cwd = ctx.cwd;
  // Before anything under .pi/ is read or written (docs/subsystems/launch.md, "The store is yours"):
  // the run's children are delegate trees of this session.
  requireStoreTrusted(cwd, ["delegate", "fusion"], sessionDirFor(cwd, ctx.sessionManager.getSessionId()));
  // A key that already started work returns it before any admission (and again inside the step).
  if (args.key !== undefined) {
    const found = findKeyedLaunch(cwd, args.key, host.settings.retentionDays);
    if ("existing" in found) return already(found.existing, args.key, cwd);
  }
  const routes = candidateRoutes(args, host);
  requireCapacity(cwd, host.settings.maxRunning, routes.length);
  const candidates = routes.map((r) => resolveRoute(r, ctx, host.thinkingLevel));
  const merge = resolveRoute(args.merge, ctx, host.thinkingLevel);
  // One cap for the run (docs/subsystems/fusion.md, "The spend cap"): every route must be priced.
  const capUsd = resolveSpendCap(args.maxCostUsd, host.settings);
  if (capUsd !== undefined) {
    for (const route of [...candidates, merge]) {
      requirePriced(capUsd, route);
      requireOutputLimit(capUsd, route, host.piVersion);
    }
  }
  // A member of a capped group takes its group's cap, and must fit what it has left (again at the commit).
  const sessionId = ctx.sessionManager.getSessionId();
  const grouped = { ...args, groupMaxCostUsd: resolveGroupCap(cwd, sessionId, args) };
  const group = groupFor(sessionId, grouped.group, grouped.groupMaxCostUsd);
  requireGroupRoom(cwd, sessionId, group, capUsd);
  const share = capUsd === undefined ? undefined : shareRunCap(capUsd, candidates.length);
  const snap = snapshotParent(ctx, toolCallId, host);
  const seats: ChildSeat[] = candidates.map((route, i) => ({
    stage: "candidate",
    slot: `candidate-${i + 1}`,
    attempt: 1,
    route,
    capUsd: share?.candidate_usd,
  }));

  const name = args.name ?? defaultName(args.prompt);
  const limits = {
    max_turns: args.maxTurns,
    max_tool_calls: args.maxToolCalls,
    timeout_seconds: args.timeoutSeconds,
    ...(capUsd === undefined ? {} : { max_cost_usd: capUsd }),
  };
  const createdAt = Date.now();
  // Every candidate is admitted before anything exists: a refusal (e.g. seed_budget_exceeded) leaves nothing.
  const admitted = seats.map((seat) => ({
    seat,
    plan: admitChild(snap, { record: { name, limits, ...schemaOf(args) }, createdAt }, seat, args.prompt),
  }));

  const registry = getRegistry();
  // The locked step (src/launch/admission-step.ts): the key, capacity for every candidate, then the
  // run directory, run.json and every candidate's tree, committed before anything awaits.
  let launched: { run: LiveRun; started: Promise<{ end: Promise<ChildEnd> }[]> } | undefined;
  const step = await launchStep({
    cwd,
    agentDir: getAgentDir(),
    maxRunning: host.settings.maxRunning,
    needed: routes.length,
    key:
      args.key === undefined
        ? undefined
        : { key: args.key, kind: "fusion", retentionDays: host.settings.retentionDays },
    commit: (recordKey) => {
      requireGroupRoom(cwd, sessionId, group, capUsd);
      const handle = createRun({ cwd, workflow: FUSION_WORKFLOW });
      const record = runRecord(handle.runId, name, grouped, snap, candidates, merge, limits);
      const run: LiveRun = {
        runId: handle.runId,
        runDir: handle.runDir,
        cwd,
        maxRunning: host.settings.maxRunning,
        record,
        prompt: args.prompt,
        handle,
        createdAt,
        stage: "preflight",
        children: [],
        attempts: [],
        usage: emptyRunUsage(),
        chargedUsd: 0,
        reason: undefined,
        deadline: setTimeout(() => registry.end(handle.runId, "timeout"), args.timeoutSeconds * 1000),
      };
      run.deadline.unref();
      registry.addRun(run);
      try {
        handle.writeArtifact(RUN_RECORD_PATH, canonicalJsonLine(record));
        // Before any candidate starts: a key that cannot be recorded fails the run with no child.
        recordKey(handle.runId, handle.runDir);
        run.stage = "candidate";
        // Each launchChild commits its tree before its first await, so inside this step.
        launched = { run, started: Promise.all(admitted.map(({ seat, plan }) => launchChild(run, seat, () => plan))) };
      } catch (error) {
        throw failedStart(run, error);
      }
      return { id: handle.runId, dir: handle.runDir };
    },
  });
  if ("existing" in step) return already(step.existing, args.key ?? "", cwd);
  if (launched === undefined) throw new DelegateError("artifact_error", "the run's step committed nothing");
  const { run } = launched;
  const { handle, record } = run;
  let starts: Promise<ChildEnd>[];
  try {
    starts = (await launched.started).map((s) => s.end);
  } catch (error) {
    throw failedStart(run, error);
  }
  void runPipeline(run, snap, merge, starts);
  const details: FusionReceiptDetails = {
    kind: "bg_fusion_receipt",
    run_id: handle.runId,
    name: record.name,
    candidates: seats.map((seat) => ({
      slot: seat.slot,
      provider: seat.route.provider,
      model: seat.route.model,
      task_id: run.children.find((c) => c.slot === seat.slot)?.taskId ?? null,
    })),
    merge: record.merge,
    seed_projection_sha256: record.seed_projection_sha256,
    prompt_sha256: record.prompt_sha256,
    artifact_dir: handle.runDir,
    limits: record.limits,
    spend: share ?? null,
    auto_deliver: record.auto_deliver,
    notify_on_completion: record.notify_on_completion,
    trigger_on_completion: record.trigger_on_completion,
    retrieve_with: { tool: "bg_result", taskId: handle.runId },
    settings_ignored: host.settings.ignored,
    key_record_ignored: step.keyIgnored,
    group: record.group ?? null,
  };
  if (args.key !== undefined) recordKeyReceipt(cwd, args.key, handle.runId, details);
  return { text: fusionReceiptText(details, cwd), details };
}

function already(existing: ExistingLaunch, key: string, cwd: string): FusionStart {
  const details = alreadyStartedDetails(existing, key);
  return { text: alreadyStartedText(details, cwd), details };
}

/**
 * A run whose start failed after its directory exists: forgotten, committed failed (removed when
 * even that cannot be written, e.g. a full disk), its refusal thrown.
 */
function failedStart(run: LiveRun, error: unknown): DelegateError {
  getRegistry().forgetRun(run.runId);
  const failure = writeFailure(error, run.handle.runDir, "the run could not be started");
  try {
    run.handle.commitFailed({
      summary: {
        code: failure.code,
        stage: "preflight",
        childCreated: false,
        message: failure.message,
        attempts: [],
        usageSoFar: { status: "unavailable", reason: "no child was started" },
        spend: liveRunSpend(run),
      },
    });
  } catch {
    // Unwritable (a full disk): a run left `running` would read as live; removed, the refusal says what happened.
    rmSync(run.handle.runDir, { recursive: true, force: true });
    return failure.withFacts({ childProcessCreated: false, artifacts: [] });
  }
  return failure.withFacts({ childProcessCreated: false, artifacts: [run.handle.runDir] });
}

function runRecord(
  runId: string,
  name: string,
  args: FusionArguments,
  snap: ParentSnapshot,
  candidates: ResolvedRoute[],
  merge: ResolvedRoute,
  limits: FusionRunRecord["limits"],
): FusionRunRecord {
  return {
    schema_version: SCHEMA.fusionRun,
    run_id: runId,
    name,
    parent_session_id: snap.sessionId,
    prompt_sha256: sha256Hex(args.prompt),
    seed_projection_sha256: sha256Hex(snap.projectionJson),
    candidates: candidates.map((r) => ({ provider: r.provider, model: r.model })),
    merge: { provider: merge.provider, model: merge.model },
    limits,
    auto_deliver: args.autoDeliver,
    notify_on_completion: args.notifyOnCompletion,
    trigger_on_completion: args.triggerOnCompletion,
    ...schemaOf(args),
    ...(args.key === undefined ? {} : { key_sha256: sha256Hex(args.key) }),
    ...groupRecord(groupFor(snap.sessionId, args.group, args.groupMaxCostUsd)),
  };
}
