/**
 * The offline demo's and the bench's scripted model server: the package's own
 * (src/host/probe/model-server.ts, the one the host probe uses), loaded with jiti as Pi loads the
 * extension. `decide(request)` sees `{ model, stream, messages: [{ role, text, toolCalls?,
 * toolCallId? }], tools }` and returns `{ text?, toolCalls? }`.
 */
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const { startScriptedModelServer } = await jiti.import("../../src/host/probe/model-server.ts");

/** Start the server; see src/host/probe/model-server.ts. */
export function startModelServer(decide) {
  return startScriptedModelServer(decide);
}
