import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { parseResultArguments, RESULT_PARAMETERS, type ResultArguments } from "../arguments/result-arguments.ts";
import { packageTool } from "./define.ts";

export interface ResultRetriever<TDetails> {
  retrieve(args: ResultArguments, ctx: ExtensionContext): Promise<AgentToolResult<TDetails>>;
}

const DESCRIPTION =
  "Get the result of a bg_delegate task or a background Fusion run. Never waits: a running task returns a typed " +
  "not-ready view. A finished task's answer is verified (identity, seed, route, hashes, base64, UTF-8) before any of " +
  "it is returned, inline up to 48 KiB or as a file reference; it is never truncated.";

export function createBgResultTool<TDetails>(
  retriever: ResultRetriever<TDetails>,
): ToolDefinition<typeof RESULT_PARAMETERS, TDetails> {
  return packageTool({
    name: "bg_result",
    label: "Background Result",
    description: DESCRIPTION,
    promptSnippet: "bg_result: fetch the verified answer of a finished bg_delegate task (never blocks)",
    parameters: RESULT_PARAMETERS,
    parse: parseResultArguments,
    run: (params, _toolCallId, ctx) => retriever.retrieve(params, ctx),
  });
}
