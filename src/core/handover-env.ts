/**
 * The handover from parent to child through the environment (docs/subsystems/launch.md, "Environment
 * and credentials"): written by the launch, read by the guard, both from this one table.
 */
import { CHILD_ENV } from "./constants.ts";

/** What identifies the task a child serves. */
export interface Handover {
  taskDir: string;
  taskId: string;
  launchNonce: string;
  seedSha256: string;
}

/** The handover variables, the child marker included (the extension stays inert in a child). */
export function handoverEnv(handover: Handover): Record<string, string> {
  return {
    [CHILD_ENV.taskDir]: handover.taskDir,
    [CHILD_ENV.taskId]: handover.taskId,
    [CHILD_ENV.nonce]: handover.launchNonce,
    [CHILD_ENV.seedSha256]: handover.seedSha256,
    [CHILD_ENV.marker]: "1",
  };
}

/** The handover from the env, or undefined when this process is not a delegate child at all. */
export function readHandover(env: NodeJS.ProcessEnv): Handover | undefined {
  const taskDir = env[CHILD_ENV.taskDir];
  if (taskDir === undefined || taskDir === "") return undefined;
  return {
    taskDir,
    taskId: env[CHILD_ENV.taskId] ?? "",
    launchNonce: env[CHILD_ENV.nonce] ?? "",
    seedSha256: env[CHILD_ENV.seedSha256] ?? "",
  };
}
