import { join } from "node:path";
import { buildSessionContext, type ExtensionContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import type { DelegateArguments } from "../arguments/delegate-arguments.ts";
import { canonicalJsonWithPart } from "../core/canonical.ts";
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { groupFor } from "../core/group.ts";
import { bundledRgProblem, resolveSearchTools } from "../core/search-tools.ts";
import type { PackageSettings } from "../core/settings.ts";
import { longCacheRetention, type SeedSpend } from "../core/spend.ts";
import type { SeedDocument } from "../core/types.ts";
import type { HostCapabilities, HostProof } from "../host/index.ts";
import { type HostAdmission, locateGuard, locatePiCli, requireHostAdmitted } from "../host/index.ts";
import { processStartTime } from "../process/identity.ts";
import { type TaskTree, writeTaskTree } from "../store/artifacts.ts";
import { requireCapacity } from "./admission-step.ts";
import { buildChildArgv, buildChildEnv, hostFlags } from "./argv.ts";
import { type BudgetPlan, planBudget, toSeedBudget } from "./budget.ts";
import { admitPrevious, followUpLink, followUpPrompt, manifestLink, type PreviousTask } from "./follow-up.ts";
import { requireGroupRoom, resolveGroupCap } from "./group-cap.ts";
import { buildLedger } from "./ledger.ts";
import { projectConversation, projectionJson } from "./projection.ts";
import { buildChildPrompt, CHILD_SYSTEM_PROMPT } from "./prompt.ts";
import { type ResolvedRoute, resolveRoute } from "./route.ts";
import { branchMessages } from "./session-branch.ts";
import {
  planSpend,
  requireOutputLimit,
  requirePriced,
  resolveSpendCap,
  type SpendEstimate,
  spendEstimate,
} from "./spend-plan.ts";
import { buildManifest, buildSeed, type LaunchManifest, newTaskIdentity } from "./task-documents.ts";

export interface HostFacts {
  piVersion: string;
  /** What src/host/admission.ts decided for this Pi (awaited before admission). */
  admission: HostAdmission;
  thinkingLevel: string;
  settings: PackageSettings;
}

/** Everything admission decided; nothing exists on disk yet. */
export interface LaunchPlan {
  args: DelegateArguments;
  taskDir: string;
  seed: SeedDocument;
  seedLine: string;
  childPrompt: string;
  ledger: unknown;
  budget: BudgetPlan;
  /** The spend cap's block and its admission figures; undefined without a cap. */
  spend: { seed: SeedSpend; estimate: SpendEstimate } | undefined;
  argv: string[];
  manifest: LaunchManifest;
  /** What the locked step (src/launch/admission-step.ts) checks at the commit: the project's settings. */
  project: { maxRunning: number; retentionDays: number };
  /** A follow-up's carried session (the previous session without its header line); undefined otherwise. */
  carried: Buffer | undefined;
  /**
   * bgDelegate.onExit "finish": the child outlives this Pi and keeps its own deadline
   * (docs/configuration.md, "Quitting Pi"); never for a Fusion run's children, whose run needs its Pi.
   */
  outlive: boolean;
}

/** The parent's project trust on hosts that have it (Pi 1.x `isProjectTrusted`); 0.73.1 has none. */
export function projectTrusted(ctx: ExtensionContext): boolean {
  const withTrust = ctx as ExtensionContext & { isProjectTrusted?: () => boolean };
  return typeof withTrust.isProjectTrusted === "function" ? withTrust.isProjectTrusted() === true : false;
}

/**
 * The parent's state, taken once (docs/subsystems/launch.md, "Admission order", from the hook contract
 * to the seed projection): a Fusion run launches its later children from this snapshot, after the
 * tool call (and perhaps the extension instance) that took it is gone.
 */
export interface ParentSnapshot {
  cwd: string;
  sessionId: string;
  host: HostFacts;
  piCli: string;
  guardPath: string;
  hostProof: HostProof;
  capabilities: HostCapabilities;
  projectTrusted: boolean;
  projection: unknown;
  projectionJson: string;
  ledger: unknown;
}

export function snapshotParent(ctx: ExtensionContext, toolCallId: string, host: HostFacts): ParentSnapshot {
  const hostProof = requireHostAdmitted(host.admission);
  // Capability and tool set: "inspect" is the only profile; its isolation needs pi's CLI and our guard.
  const piCli = locatePiCli(host.settings.piCli);
  const capabilities = host.admission.capabilities;
  if (capabilities === undefined) {
    throw new DelegateError("delegate_isolation_unsupported", `the flags of pi's CLI ${piCli} were not read`, {
      childProcessCreated: false,
    });
  }
  const guardPath = locateGuard();
  if (resolveSearchTools(getAgentDir(), process.env.PATH ?? "") === undefined) {
    throw new DelegateError(
      "search_tools_unavailable",
      `no rg for the child's grep and find: none in the agent dir's bin/ or on PATH, and ${bundledRgProblem()}`,
      { childProcessCreated: false },
    );
  }
  // Limits were bounded by the argument check; nothing further to refuse here.
  // One walk over the branch where its shapes are proven to give the host's messages; otherwise the
  // host's own buildSessionContext (docs/subsystems/launch.md, "The projection").
  const entries = ctx.sessionManager.getEntries();
  const leafId = ctx.sessionManager.getLeafId();
  const byId = (id: string) => ctx.sessionManager.getEntry(id);
  const messages =
    branchMessages(entries, leafId, host.piVersion, byId) ?? buildSessionContext(entries, leafId).messages;
  const { projection, ledger } = projectConversation(messages, toolCallId);
  return {
    cwd: ctx.cwd,
    sessionId: ctx.sessionManager.getSessionId(),
    host,
    piCli,
    guardPath,
    hostProof,
    capabilities,
    projectTrusted: projectTrusted(ctx),
    projection,
    projectionJson: projectionJson(projection),
    ledger,
  };
}

/**
 * Admission (pure: no directory, no process) in the documented order: arguments (already parsed),
 * running-delegate cap, route, hook contract, capability and tool set, limits, seed projection, budget.
 */
export function admit(args: DelegateArguments, toolCallId: string, ctx: ExtensionContext, host: HostFacts): LaunchPlan {
  // A follow-up's previous task is verified first (docs/tools/bg_delegate.md, "Follow-ups").
  const previous = args.previousTaskId === undefined ? undefined : admitPrevious(ctx.cwd, args.previousTaskId);
  // Early, for a refusal before any work; the locked step checks again at the commit.
  requireCapacity(ctx.cwd, host.settings.maxRunning);
  const capped = { ...args, maxCostUsd: resolveSpendCap(args.maxCostUsd, host.settings) };
  // A member of a capped group takes its group's cap, and must fit what it has left (checked again at the commit).
  const sessionId = ctx.sessionManager.getSessionId();
  capped.groupMaxCostUsd = resolveGroupCap(ctx.cwd, sessionId, args);
  requireGroupRoom(ctx.cwd, sessionId, groupFor(sessionId, args.group, capped.groupMaxCostUsd), capped.maxCostUsd);
  const resolved = resolveRoute(args.route ?? previous?.manifest.route, ctx, host.thinkingLevel);
  const route: ResolvedRoute =
    previous !== undefined && args.route === undefined ? { ...resolved, origin: "previous_task" } : resolved;
  if (capped.maxCostUsd !== undefined) {
    requirePriced(capped.maxCostUsd, route);
    requireOutputLimit(capped.maxCostUsd, route, host.piVersion);
  }
  return admitWith(snapshotParent(ctx, toolCallId, host), capped, route, previous);
}

/** The rest of admission for one child on a pinned route: budget, seed, argv, manifest (still pure). */
export function admitWith(
  snap: ParentSnapshot,
  args: DelegateArguments,
  route: ResolvedRoute,
  previous?: PreviousTask,
): LaunchPlan {
  const { cwd } = snap;
  // A follow-up without reseed sends no projection: the carried session is its context.
  const projected = previous === undefined || args.reseed;
  const projection = projected ? snap.projection : null;
  const ledger = projected ? snap.ledger : buildLedger([]);
  const projectionText = projected ? snap.projectionJson : "null";
  const identity = newTaskIdentity(cwd, snap.sessionId);
  const childPrompt =
    previous === undefined
      ? buildChildPrompt({ directive: args.prompt, seedJson: snap.projectionJson, outputSchema: args.outputSchema })
      : followUpPrompt(previous, args, identity.taskId, snap.projectionJson);
  const budget = planBudget({
    route: { provider: route.provider, model: route.model },
    contextWindow: route.contextWindow,
    systemPrompt: CHILD_SYSTEM_PROMPT,
    // The carried session is part of every request, so admission counts it with the prompt.
    childPrompt: previous === undefined ? childPrompt : `${previous.carried.toString("utf8")}${childPrompt}`,
  });
  // The spend cap, by the plan's provable estimate (args.maxCostUsd is already the resolved cap).
  const spend = planSpend(
    args.maxCostUsd,
    route,
    budget.provable_forecast.total_tokens,
    longCacheRetention(process.env),
  );

  const taskDir = identity.taskDir;
  const seed = buildSeed({
    identity,
    args,
    route: {
      provider: route.provider,
      model: route.model,
      context_window_tokens: route.contextWindow,
      thinking_level: route.thinkingLevel,
      origin: route.origin,
    },
    projection,
    budget: toSeedBudget(budget),
    spend,
    childPrompt,
    systemPrompt: CHILD_SYSTEM_PROMPT,
    followUp: previous === undefined ? undefined : followUpLink(previous, args.reseed),
    readRoots: snap.host.settings.readRoots,
    chainArtifacts: previous?.chainArtifacts,
  });
  const argv = buildChildArgv({
    piCli: snap.piCli,
    guardPath: snap.guardPath,
    provider: route.provider,
    model: route.model,
    thinkingLevel: route.thinkingLevel,
    sessionFile: join(taskDir, TASK_FILES.sessionFile),
    systemPrompt: CHILD_SYSTEM_PROMPT,
    extensionMode: args.extensionMode,
    capabilities: snap.capabilities,
    projectTrusted: snap.projectTrusted,
  });
  const manifest = buildManifest({
    identity,
    args,
    spend,
    route,
    host: {
      pi_version: snap.host.piVersion,
      proof: snap.hostProof,
      flags_from: snap.capabilities.source,
      host_flags: hostFlags({
        capabilities: snap.capabilities,
        extensionMode: args.extensionMode,
        projectTrusted: snap.projectTrusted,
      }),
    },
    owner: { pid: process.pid, start_time: processStartTime(process.pid) },
    settingsIgnored: snap.host.settings.ignored,
    followUp: previous === undefined ? undefined : manifestLink(previous, args.reseed),
  });
  // The projection is the bulk of the seed: splice its canonical text in rather than re-serialize it.
  const { projection: _projection, ...rest } = seed;
  const seedLine = `${canonicalJsonWithPart(rest, "projection", projectionText)}\n`;
  return {
    args,
    taskDir,
    seed,
    seedLine,
    childPrompt,
    ledger,
    budget,
    spend: spend === undefined ? undefined : { seed: spend, estimate: spendEstimate(spend) },
    argv,
    manifest,
    project: { maxRunning: snap.host.settings.maxRunning, retentionDays: snap.host.settings.retentionDays },
    carried: previous?.carried,
    outlive: snap.host.settings.onExit === "finish",
  };
}

/** Commit the plan to disk (artifact_error removes it again). */
export function commitPlan(plan: LaunchPlan): TaskTree {
  return writeTaskTree({
    taskDir: plan.taskDir,
    seed: plan.seed,
    seedLine: plan.seedLine,
    childPrompt: plan.childPrompt,
    ledger: plan.ledger,
    budgetPlan: plan.budget,
    manifest: plan.manifest,
    carriedSession: plan.carried,
  });
}

export function childEnvFor(plan: LaunchPlan, tree: TaskTree): Record<string, string> {
  return buildChildEnv(process.env, {
    taskDir: tree.taskDir,
    taskId: plan.seed.task_id,
    launchNonce: plan.seed.launch_nonce,
    seedSha256: tree.seedSha256,
    extensionMode: plan.args.extensionMode,
    provider: plan.seed.route.provider,
    agentDir: getAgentDir(),
    outlive: plan.outlive,
  });
}
