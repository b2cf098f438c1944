/**
 * Who may set each `bgDelegate` setting, and how the environment's, your user settings' and a
 * project's values combine (docs/configuration.md, "Who may set what"). One list: loadSettings
 * (src/core/settings.ts) combines by each entry's `rule`, and the docs generator writes the table
 * from the same entries.
 *
 * A project's `.pi/settings.json` comes with the repository you opened. It may narrow what you
 * allowed (a lower cap, fewer children, self-proof off, trees kept longer) and is otherwise ignored;
 * on a host with project trust (Pi 1.x) a trusted project may set what your user settings could.
 */
import {
  MAX_COST_USD_ENV,
  MAX_RUNNING_ENV,
  NON_INTERACTIVE_ENV,
  ON_EXIT_ENV,
  PI_CLI_ENV,
  READ_ROOTS_ENV,
  RETENTION_DAYS_ENV,
  SELF_PROOF_ENV,
} from "./constants.ts";

/**
 * - `yours`: only you (environment, user settings) or a trusted project; an untrusted project's value is ignored.
 * - `lower`: an untrusted project may set a lower number than yours.
 * - `off`: an untrusted project may turn it off, never on.
 * - `longer`: an untrusted project may keep trees longer (more days, or 0: never pruned).
 * - `anyone`: the project's value wins over yours (it widens nothing).
 * - `inside`: only you; any project, trusted or not, may only name directories inside yours.
 */
export type SettingRule = "yours" | "lower" | "off" | "longer" | "anyone" | "inside" | "cancel";

export interface SettingPolicy {
  /** The key under `bgDelegate` in settings.json. */
  key: string;
  /** The environment variable that sets it (yours, for this process), or null. */
  env: string | null;
  rule: SettingRule;
  /** Why an untrusted project may not widen it: the end of the line naming an ignored value. */
  because: string;
}

export const SETTING_POLICIES: readonly SettingPolicy[] = [
  { key: "piCli", env: PI_CLI_ENV, rule: "yours", because: "it chooses the code that runs as your delegates" },
  {
    key: "fusion.candidates",
    env: null,
    rule: "yours",
    because: "it chooses which models your conversation is sent to",
  },
  { key: "maxRunning", env: MAX_RUNNING_ENV, rule: "lower", because: "a project may only lower it" },
  { key: "maxCostUsd", env: MAX_COST_USD_ENV, rule: "lower", because: "a project may only lower the spend cap" },
  { key: "selfProof", env: SELF_PROOF_ENV, rule: "off", because: "a project may only turn self-proof off" },
  {
    key: "retentionDays",
    env: RETENTION_DAYS_ENV,
    rule: "longer",
    because: "a project may only keep trees longer",
  },
  {
    key: "readRoots",
    env: READ_ROOTS_ENV,
    rule: "inside",
    because: "a project may only name directories inside yours",
  },
  {
    key: "onExit",
    env: ON_EXIT_ENV,
    rule: "cancel",
    because: "a project may only have delegates cancelled when Pi quits",
  },
  {
    key: "nonInteractive",
    env: NON_INTERACTIVE_ENV,
    rule: "anyone",
    because: "it only decides whether this process waits for its own work",
  },
];

export function settingPolicy(key: string): SettingPolicy {
  const policy = SETTING_POLICIES.find((p) => p.key === key);
  if (policy === undefined) throw new Error(`no setting policy for bgDelegate.${key}`);
  return policy;
}

/** The documented meaning of each rule: who may set a key, how its values combine (the docs table). */
export const SETTING_RULE_TEXT: Record<SettingRule, { who: string; combine: string }> = {
  yours: {
    who: "you (environment, user settings); a trusted project",
    combine: "environment, else a trusted project, else your user settings; an untrusted project's value is ignored",
  },
  lower: {
    who: "you; a trusted project; any project only below yours",
    combine:
      "yours (environment, else user settings, else the default), lowered by any project's lower value; a trusted project's higher value wins over your user settings, not over the environment",
  },
  off: {
    who: "you; a trusted project; any project only `false`",
    combine:
      "yours, turned off by any project's `false`; a trusted project's `true` wins over your user settings, not over the environment",
  },
  longer: {
    who: "you; a trusted project; any project only more days (or `0`, never pruned)",
    combine:
      "yours, lengthened by any project's more days or `0`; a trusted project's fewer days win over your user settings, not over the environment",
  },
  inside: {
    who: "you (environment, user settings); any project, trusted or not, only directories inside yours",
    combine:
      "environment, else your user settings; a project's list wins when each of its directories really lies inside one of yours, and is otherwise ignored",
  },
  cancel: {
    who: "you; a trusted project; any project only `cancel`",
    combine:
      "yours (environment, else user settings, else `cancel`), turned to `cancel` by any project; a trusted project's `finish` wins over your user settings, not over the environment",
  },
  anyone: {
    who: "you; any project",
    combine: "environment, else the project, else your user settings, else the default",
  },
};
