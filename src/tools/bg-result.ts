import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { parseResultArguments, RESULT_PARAMETERS, type ResultArguments } from "../arguments/result-arguments.ts";
import { toToolError } from "../core/failure-text.ts";

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
  return {
    name: "bg_result",
    label: "Background Result",
    description: DESCRIPTION,
    promptSnippet: "bg_result: fetch the verified answer of a finished bg_delegate task (never blocks)",
    parameters: RESULT_PARAMETERS,
    // The one parse: Pi validates what this returns against the schema and hands it to execute.
    prepareArguments: (raw) => {
      try {
        return parseResultArguments(raw);
      } catch (error) {
        throw toToolError(error);
      }
    },
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      try {
        return await retriever.retrieve(params, ctx);
      } catch (error) {
        throw toToolError(error);
      }
    },
  };
}
