/**
 * The one shape of the package's tools (bg_delegate, bg_fusion, bg_result): Pi's tool definition
 * from a tool's texts (src/tools/texts.ts), its arguments (schema, strict check, defaults;
 * src/arguments/) and what it runs. The check is the one parse — Pi validates what it returns against
 * the schema and hands it to `execute` — and anything thrown, by the check or the run, reaches the
 * model as the failure text (src/core/failure-text.ts).
 */
import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { TSchema } from "@sinclair/typebox";
import type { Offered, ToolArguments } from "../arguments/tool-arguments.ts";
import { strictArguments, toToolError } from "../core/failure-text.ts";
import type { PiUsage } from "./books.ts";
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

/**
 * A tool's structured result for scripts (src/tools/structured.ts): its schema, declared as Pi's
 * `outputSchema`, and the projection of each successful result into it (`structuredContent`).
 */
export interface ToolOutput<TDetails> {
  schema: TSchema;
  of(details: TDetails, text: string): unknown;
}

/** The text of a result's first text block. */
function textOf(result: AgentToolResult<unknown>): string {
  const first = result.content.find((c) => c.type === "text");
  return first?.type === "text" ? first.text : "";
}

/**
 * What a failure spent, for Pi's books (src/tools/books.ts failureForBooks): the usage a failed result
 * carries, or undefined to throw the failure as usual. Given only on a host that keeps a returned
 * failure (src/host keepsReturnedToolErrors).
 */
export type FailureUsage = (error: unknown) => PiUsage | undefined;

/** A failure returned rather than thrown, as Pi 1.x's agent loop reads it: failed, with what it spent. */
type BookedFailure<TDetails> = AgentToolResult<TDetails> & { isError: true; usage: PiUsage };

export function packageTool<S extends TSchema, A, TDetails>(
  texts: ToolTexts,
  args: ToolArguments<S, A>,
  run: ToolRun<A, TDetails>,
  output?: ToolOutput<NoInfer<TDetails>>,
  failureUsage?: FailureUsage,
): ToolDefinition<Offered<S>, TDetails> {
  const definition: ToolDefinition<Offered<S>, TDetails> = {
    ...texts,
    label: labelOf(texts.name),
    parameters: args.parameters,
    prepareArguments: strictArguments(args.check),
    async execute(toolCallId, params, _signal, _onUpdate, ctx) {
      let result: AgentToolResult<TDetails>;
      try {
        result = await run(args.complete(params), toolCallId, ctx);
      } catch (error) {
        const failure = toToolError(error);
        const usage = failureUsage?.(error);
        if (usage === undefined) throw failure;
        // The same text and empty details as Pi's own result for a thrown error, plus the usage.
        const booked: BookedFailure<TDetails> = {
          content: [{ type: "text", text: failure.message }],
          details: {} as TDetails,
          isError: true,
          usage,
        };
        return booked;
      }
      if (output === undefined) return result;
      // Pi 1.x keeps it for scripts; Pi 0.73.1 builds its message without it (nothing changes there).
      const structured = { ...result, structuredContent: output.of(result.details, textOf(result)) };
      return structured;
    },
  };
  // Declared where the host reads it (Pi 1.x); an extra field Pi 0.73.1 does not read.
  return output === undefined ? definition : Object.assign(definition, { outputSchema: output.schema });
}
