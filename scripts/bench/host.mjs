/**
 * The pi host the bench runs on (scripts/hosts.mjs; $PI_BG_DELEGATE_TEST_HOST, set by bench.mjs from
 * --host) and its own SDK module: SDK parents and sessions are always the host's, never a mix.
 */
import { resolveHost } from "../hosts.mjs";

export const HOST = resolveHost();
export const sdk = await import(HOST.sdkUrl);

/** A model registry (and what createAgentSession needs with it) the way this host builds one. */
export async function createRegistry(agentDir, modelsPath) {
  const authPath = `${agentDir}/auth.json`;
  if (HOST.packageName.startsWith("@earendil-works/")) {
    const modelRuntime = await sdk.ModelRuntime.create({ authPath, modelsPath });
    return { modelRegistry: new sdk.ModelRegistry(modelRuntime), sessionOptions: { modelRuntime } };
  }
  const authStorage = sdk.AuthStorage.create(authPath);
  const modelRegistry = sdk.ModelRegistry.create(authStorage, modelsPath);
  return { modelRegistry, sessionOptions: { authStorage, modelRegistry } };
}
