/**
 * The offline demo's and the bench's scripted model server: the package's own
 * (src/host/model-server/server.ts, the one the host probe and the tests use), loaded with jiti as Pi
 * loads the extension. `decide(request)` sees a ModelRequest (src/host/model-server/request.ts:
 * `{ model, messages: [{ role, text, toolCalls?, toolCallId? }], tools, maxOutput, bodyLength, … }`)
 * and returns a ScriptedReply (`{ text?, toolCalls?, usage?, … }`); what it throws fails the request
 * with HTTP 500 and is kept in `server.errors`.
 */
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const { startScriptedModelServer } = await jiti.import("../../src/host/model-server/index.ts");

/** Start the server; see src/host/model-server/server.ts. */
export function startModelServer(decide) {
  return startScriptedModelServer(decide);
}
