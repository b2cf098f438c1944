/**
 * The one shape of the package's tools (bg_delegate, bg_fusion, bg_result): Pi's tool definition
 * from a tool's texts, its schema, its strict parse and what it runs. The parse is the one parse —
 * Pi validates what it returns against the schema and hands it to `execute` — and anything thrown,
 * by the parse or the run, reaches the model as the failure text (src/core/failure-text.ts).
 */
import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { strictArguments, toToolError } from "../core/failure-text.ts";

/** A tool's parameter schema, as Pi's tool definition takes it. */
type ToolSchema = ToolDefinition["parameters"];
/** The checked arguments of a tool with that schema. */
type ToolParams<TParams extends ToolSchema> = ReturnType<NonNullable<ToolDefinition<TParams>["prepareArguments"]>>;

export interface PackageToolSpec<TParams extends ToolSchema, TDetails> {
  name: string;
  label: string;
  description: string;
  promptSnippet: string;
  promptGuidelines?: string[];
  parameters: TParams;
  parse: (raw: unknown) => ToolParams<TParams>;
  run: (params: ToolParams<TParams>, toolCallId: string, ctx: ExtensionContext) => Promise<AgentToolResult<TDetails>>;
}

export function packageTool<TParams extends ToolSchema, TDetails>(
  spec: PackageToolSpec<TParams, TDetails>,
): ToolDefinition<TParams, TDetails> {
  const { parse, run, ...texts } = spec;
  return {
    ...texts,
    prepareArguments: strictArguments(parse),
    async execute(toolCallId, params, _signal, _onUpdate, ctx) {
      try {
        return await run(params, toolCallId, ctx);
      } catch (error) {
        throw toToolError(error);
      }
    },
  };
}
