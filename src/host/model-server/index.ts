/**
 * The scripted model server's door (./server.ts): what the host probe, the offline demo, the bench
 * and the tests start it with and read of it.
 */
export { plausiblePromptTokens, type ReplyUsage, type ScriptedReply, thinkingSignature } from "./reply.ts";
export type { ModelRequest, NormalizedMessage, ToolSchema, WireProtocol } from "./request.ts";
export { type Answer, type ScriptedModelServer, startScriptedModelServer } from "./server.ts";
