import { readFileSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import {
  ARGUMENT_BOUNDS,
  DEFAULT_MAX_RUNNING,
  DEFAULT_RETENTION_DAYS,
  MAX_COST_USD_ENV,
  NON_INTERACTIVE_CHOICES,
  type NonInteractiveChoice,
  ON_EXIT_CHOICES,
  ON_EXIT_ENV,
  type OnExitChoice,
  READ_ROOTS_MAX,
  SETTINGS_KEY,
} from "./constants.ts";
import { realLocation, within } from "./read-reach.ts";
import { checkDocument } from "./schema/check.ts";
import { FusionCandidatesSchema } from "./schema/settings.ts";
import { type SettingPolicy, settingPolicy } from "./setting-trust.ts";
import type { PinnedRoute } from "./types.ts";
import { dollars, SchemaViolation } from "./validate.ts";

export interface PackageSettings {
  /** Running delegates allowed per project. */
  maxRunning: number;
  /** Path to pi's dist/cli.js, for hosts where process.argv[1] is not pi (SDK hosts). */
  piCli: string | undefined;
  /** Days an ended task's tree is kept before the prune at session start removes it; 0: never pruned. */
  retentionDays: number;
  /** Whether a Pi version outside the proven set may prove itself with the host probe (default true). */
  selfProof: boolean;
  /** `pi -p` and `--mode json`: wait for this process's delegates and their turns (default), or cancel them. */
  nonInteractive: NonInteractiveChoice;
  /** Quitting Pi: cancel its running delegates (default), or let them finish and be told next session. */
  onExit: OnExitChoice;
  /**
   * bgDelegate.fusion.candidates: bg_fusion's default routes; `problem` when the setting exists but is
   * not 2-4 routes {provider, model} (docs/configuration.md, "Fusion candidates").
   */
  fusionCandidates: { routes: PinnedRoute[] } | { problem: string } | undefined;
  /**
   * bgDelegate.maxCostUsd / PI_BG_DELEGATE_MAX_COST_USD: the default spend cap in US dollars;
   * `problem` when one is set but is not a finite number in (0, 10,000] (a cap is never ignored).
   */
  maxCostUsd: { usd: number } | { problem: string } | undefined;
  /**
   * bgDelegate.readRoots / PI_BG_DELEGATE_READ_ROOTS: absolute directories a delegate may read beyond
   * the project (docs/configuration.md, "What a delegate may read"); none by default.
   */
  readRoots: string[];
  /**
   * One line per project setting that was ignored because only you may widen it (src/core/setting-trust.ts):
   * the key, the value, why, and yours. Shown in a receipt's details and by `pi-bg-delegate show`.
   */
  ignored: string[];
}

/** bgDelegate.fusion.candidates of one settings section: undefined when unset; a malformed one is reported, never ignored. */
function candidatesOf(section: Record<string, unknown>): PackageSettings["fusionCandidates"] {
  const fusion = section.fusion;
  if (typeof fusion !== "object" || fusion === null) return undefined;
  const value = (fusion as Record<string, unknown>).candidates;
  if (value === undefined) return undefined;
  try {
    return { routes: checkDocument(FusionCandidatesSchema, value, `${SETTINGS_KEY}.fusion.candidates`) };
  } catch (error) {
    if (error instanceof SchemaViolation) return { problem: error.message };
    throw error;
  }
}

function readSection(file: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed !== "object" || parsed === null) return {};
    const section = (parsed as Record<string, unknown>)[SETTINGS_KEY];
    return typeof section === "object" && section !== null ? (section as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function positiveInt(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function nonNegative(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** One spend cap, checked; see PackageSettings.maxCostUsd. */
function spendCap(at: string, raw: unknown): PackageSettings["maxCostUsd"] {
  if (raw === undefined || (typeof raw === "string" && raw.trim() === "")) return undefined;
  try {
    return { usd: dollars(typeof raw === "string" ? Number(raw) : raw, at, ARGUMENT_BOUNDS.maxCostUsd) };
  } catch (error) {
    if (error instanceof SchemaViolation) return { problem: error.message };
    throw error;
  }
}

function flag(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const text = value.trim().toLowerCase();
  if (["1", "true", "on", "yes"].includes(text)) return true;
  if (["0", "false", "off", "no"].includes(text)) return false;
  return undefined;
}

function exitChoice(value: unknown): OnExitChoice | undefined {
  const text = typeof value === "string" ? value.trim().toLowerCase() : undefined;
  return (ON_EXIT_CHOICES as readonly (string | undefined)[]).includes(text) ? (text as OnExitChoice) : undefined;
}

function choice(value: unknown): NonInteractiveChoice | undefined {
  const text = typeof value === "string" ? value.trim().toLowerCase() : undefined;
  return (NON_INTERACTIVE_CHOICES as readonly (string | undefined)[]).includes(text)
    ? (text as NonInteractiveChoice)
    : undefined;
}

/**
 * A list of absolute paths: an array of strings in a file, a path-delimiter separated string in the
 * environment; a relative or non-string entry makes the whole value unusable (skipped).
 */
function absolutePaths(value: unknown): string[] | undefined {
  const items = typeof value === "string" ? value.split(delimiter).filter((p) => p !== "") : value;
  if (!Array.isArray(items) || items.length > READ_ROOTS_MAX) return undefined;
  const paths = items.filter((p): p is string => typeof p === "string" && isAbsolute(p));
  return paths.length === items.length ? paths : undefined;
}

/** Each of `project`'s directories really lies inside one of `yours` (links resolved on both sides). */
function allInside(project: readonly string[], yours: readonly string[] | undefined): boolean {
  const mine = (yours ?? []).map(realLocation);
  return project.every((p) => mine.some((m) => within(realLocation(p), m)));
}

function nonBlank(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

export interface SettingsSource {
  /**
   * Whether the host trusts the project (Pi 1.x `ctx.isProjectTrusted()`); false on hosts without
   * project trust and wherever no session says so (the `pi-bg-delegate` command).
   */
  projectTrusted?: boolean;
}

/**
 * Settings live in pi's settings.json under "bgDelegate": the user's (<agentDir>/settings.json), the
 * project's (<cwd>/.pi/settings.json) and environment variables. Who may set which key, and how the
 * three combine, is SETTING_POLICIES (src/core/setting-trust.ts; docs/configuration.md, "Who may set
 * what"): the environment and your user settings may set anything, an untrusted project may only
 * narrow, and every project value that was ignored is named in `ignored`.
 */
export function loadSettings(
  agentDir: string,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  source: SettingsSource = {},
): PackageSettings {
  const user = readSection(join(agentDir, "settings.json"));
  const project = readSection(join(cwd, ".pi", "settings.json"));
  const ignored: string[] = [];
  const take = <T>(
    key: string,
    values: Sources<T>,
    narrows: (projectValue: T, yours: T | undefined) => boolean,
    fallback?: T,
  ) => combine(settingPolicy(key), values, source.projectTrusted === true, narrows, ignored, fallback);
  const envOf = (key: string) => env[settingPolicy(key).env ?? ""];
  const lower = (a: number, b: number | undefined) => b === undefined || a < b;
  const maxRunning = take(
    "maxRunning",
    sources(envOf("maxRunning"), user.maxRunning, project.maxRunning, positiveInt),
    (p, mine) => lower(p, mine),
    DEFAULT_MAX_RUNNING,
  );
  const piCli = take("piCli", sources(envOf("piCli"), user.piCli, project.piCli, nonBlank), () => false);
  const retentionDays = take(
    "retentionDays",
    sources(envOf("retentionDays"), user.retentionDays, project.retentionDays, nonNegative),
    (p, mine) => mine !== 0 && (p === 0 || mine === undefined || p > mine),
    DEFAULT_RETENTION_DAYS,
  );
  const selfProof = take(
    "selfProof",
    sources(envOf("selfProof"), user.selfProof, project.selfProof, flag),
    (p) => !p,
    true,
  );
  const nonInteractive = take(
    "nonInteractive",
    sources(envOf("nonInteractive"), user.nonInteractive, project.nonInteractive, choice),
    () => false,
    "wait",
  );
  // A value that is neither choice is said, never silently read as the default (a typo of "finish"
  // would otherwise cancel what the person meant to keep).
  for (const [where, raw] of [
    [ON_EXIT_ENV, envOf("onExit")],
    [`${SETTINGS_KEY}.onExit (user)`, user.onExit],
    [`${SETTINGS_KEY}.onExit in .pi/settings.json`, project.onExit],
  ] as const) {
    if (raw !== undefined && exitChoice(raw) === undefined)
      ignored.push(`${where} ${JSON.stringify(raw)} ignored: it is not "cancel" or "finish"`);
  }
  const onExit = take(
    "onExit",
    sources(envOf("onExit"), user.onExit, project.onExit, exitChoice),
    (p) => p === "cancel",
    "cancel",
  );
  const fusionCandidates = take(
    "fusion.candidates",
    { env: undefined, user: candidatesOf(user), project: candidatesOf(project) },
    () => false,
  );
  const maxCostUsd = take(
    "maxCostUsd",
    {
      env: spendCap(MAX_COST_USD_ENV, envOf("maxCostUsd")),
      user: spendCap(`${SETTINGS_KEY}.maxCostUsd (user)`, user.maxCostUsd),
      project: spendCap(`${SETTINGS_KEY}.maxCostUsd (project)`, project.maxCostUsd),
    },
    // A malformed cap is never ignored (it refuses launches until mended); a cap narrows no cap.
    (p, mine) => "problem" in p || mine === undefined || ("usd" in mine && lower(p.usd, mine.usd)),
  );
  const readRoots = take(
    "readRoots",
    sources(envOf("readRoots"), user.readRoots, project.readRoots, absolutePaths),
    (p, mine) => allInside(p, mine),
    [],
  );
  return {
    maxRunning: maxRunning ?? DEFAULT_MAX_RUNNING,
    piCli,
    retentionDays: retentionDays ?? DEFAULT_RETENTION_DAYS,
    selfProof: selfProof ?? true,
    nonInteractive: nonInteractive ?? "wait",
    onExit: onExit ?? "cancel",
    fusionCandidates,
    maxCostUsd,
    readRoots: readRoots ?? [],
    ignored,
  };
}

interface Sources<T> {
  env: T | undefined;
  user: T | undefined;
  project: T | undefined;
}

function sources<T>(env: unknown, user: unknown, project: unknown, parse: (v: unknown) => T | undefined): Sources<T> {
  return { env: parse(env), user: parse(user), project: parse(project) };
}

const SHOWN_VALUE_CHARS = 60;

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  const chars = [...text];
  return chars.length <= SHOWN_VALUE_CHARS ? text : `${chars.slice(0, SHOWN_VALUE_CHARS - 1).join("")}…`;
}

/**
 * One key's value. Yours is the environment's, else your user settings', else the default. A
 * project's value wins when `narrows` holds against yours; otherwise a trusted project's value (or
 * any project's, for a key anyone may set) wins over your user settings but not over the
 * environment, and an untrusted project's is ignored with one line (none when it equals yours).
 */
function combine<T>(
  policy: SettingPolicy,
  values: Sources<T>,
  trusted: boolean,
  narrows: (projectValue: T, yours: T | undefined) => boolean,
  ignored: string[],
  fallback: T | undefined,
): T | undefined {
  const { env, user, project } = values;
  const yours = env ?? user ?? fallback;
  if (project === undefined) return yours;
  if (narrows(project, yours)) return project;
  if ((trusted && policy.rule !== "inside") || policy.rule === "anyone") return env ?? project;
  if (JSON.stringify(project) !== JSON.stringify(yours)) {
    const mine = yours === undefined ? "unset" : shown(unwrap(yours));
    ignored.push(
      `${SETTINGS_KEY}.${policy.key} ${shown(unwrap(project))} in .pi/settings.json ignored: ${policy.because} (yours: ${mine})`,
    );
  }
  return yours;
}

/** The value a person wrote, for the ignored line: a cap's dollars, candidates' routes. */
function unwrap(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if ("usd" in value) return value.usd;
  if ("problem" in value) return "(malformed)";
  if ("routes" in value) return (value.routes as PinnedRoute[]).map((r) => `${r.provider}/${r.model}`);
  return value;
}
