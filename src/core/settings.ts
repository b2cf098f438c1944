import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  DEFAULT_MAX_RUNNING,
  DEFAULT_RETENTION_DAYS,
  MAX_RUNNING_ENV,
  PI_CLI_ENV,
  RETENTION_DAYS_ENV,
  SETTINGS_KEY,
} from "./constants.ts";

export interface PackageSettings {
  /** Running delegates allowed per project. */
  maxRunning: number;
  /** Path to pi's dist/cli.js, for hosts where process.argv[1] is not pi (SDK hosts). */
  piCli: string | undefined;
  /** Days an ended task's tree is kept before the prune at session start removes it; 0: never pruned. */
  retentionDays: number;
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

function nonBlank(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/**
 * Settings live in pi's settings.json under "bgDelegate": the user's (<agentDir>/settings.json), then
 * the project's (<cwd>/.pi/settings.json), then environment variables, later winning.
 */
export function loadSettings(agentDir: string, cwd: string, env: NodeJS.ProcessEnv = process.env): PackageSettings {
  const user = readSection(join(agentDir, "settings.json"));
  const project = readSection(join(cwd, ".pi", "settings.json"));
  return {
    maxRunning:
      positiveInt(env[MAX_RUNNING_ENV]) ??
      positiveInt(project.maxRunning) ??
      positiveInt(user.maxRunning) ??
      DEFAULT_MAX_RUNNING,
    piCli: nonBlank(env[PI_CLI_ENV]) ?? nonBlank(project.piCli) ?? nonBlank(user.piCli),
    retentionDays:
      nonNegative(env[RETENTION_DAYS_ENV]) ??
      nonNegative(project.retentionDays) ??
      nonNegative(user.retentionDays) ??
      DEFAULT_RETENTION_DAYS,
  };
}
