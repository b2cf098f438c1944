/**
 * The one shape of the package's tools (bg_delegate, bg_fusion, bg_result): Pi's tool definition
 * from a tool's texts (src/tools/texts.ts), its arguments (schema, strict check, defaults;
 * src/arguments/) and what it runs. The check is the one parse — Pi validates what it returns against
 * the schema and hands it to `execute` — and anything thrown, by the check or the run, reaches the
 * model as the failure text (src/core/failure-text.ts).
 */
import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { ArgsSchema, FieldTable, ToolArguments } from "../arguments/fields.ts";
import { strictArguments, toToolError } from "../core/failure-text.ts";
import type { ToolTexts } from "./texts.ts";

/** What a tool does with its checked, completed arguments. */
export type ToolRun<A, TDetails> = (
  args: A,
  toolCallId: string,
  ctx: ExtensionContext,
) => Promise<AgentToolResult<TDetails>>;

/** "bg_delegate" → "Background Delegate": the label Pi shows a person. */
function labelOf(name: string): string {
  const word = name.replace(/^bg_/, "");
  return `Background ${word.charAt(0).toUpperCase()}${word.slice(1)}`;
}

export function packageTool<T extends FieldTable, A, TDetails>(
  texts: ToolTexts,
  args: ToolArguments<T, A>,
  run: ToolRun<A, TDetails>,
): ToolDefinition<ArgsSchema<T>, TDetails> {
  return {
    ...texts,
    label: labelOf(texts.name),
    parameters: args.parameters,
    prepareArguments: strictArguments(args.check),
    async execute(toolCallId, params, _signal, _onUpdate, ctx) {
      try {
        return await run(args.complete(params), toolCallId, ctx);
      } catch (error) {
        throw toToolError(error);
      }
    },
  };
}
