/**
 * The pi host the bench runs on (scripts/hosts.mjs; $PI_BG_DELEGATE_TEST_HOST, set by bench.mjs from
 * --host) and its own SDK module: SDK parents and sessions are always the host's, never a mix.
 */
import { createHostRegistry, resolveHost } from "../hosts.mjs";

export const HOST = resolveHost();
export const sdk = await import(HOST.sdkUrl);

/** A model registry (and what createAgentSession needs with it) the way this host builds one. */
export function createRegistry(agentDir, modelsPath) {
  return createHostRegistry(sdk, HOST, agentDir, modelsPath);
}
