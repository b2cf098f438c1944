import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { checkArguments } from "../arguments/fields.ts";
import {
  FUSION_FIELDS,
  FUSION_PARAMETERS,
  type FusionArguments,
  withFusionDefaults,
} from "../arguments/fusion-arguments.ts";
import { packageTool } from "./define.ts";

export interface FusionLauncher<TDetails> {
  launch(args: FusionArguments, toolCallId: string, ctx: ExtensionContext): Promise<AgentToolResult<TDetails>>;
}

const DESCRIPTION =
  "Ask the same read-only question of 2-4 pinned models in the background and get one merged answer that says " +
  "where they agreed and where they did not, naming the model behind each claim. Each candidate is a guarded " +
  "read-only delegate with a frozen copy of this conversation; a model on the merge route compares the verified " +
  "answers and writes the merged one. The call returns a receipt at once; one notification arrives when the run " +
  "ends; then fetch the verified answer with bg_result.";

export function createBgFusionTool<TDetails>(
  launcher: FusionLauncher<TDetails>,
): ToolDefinition<typeof FUSION_PARAMETERS, TDetails> {
  return packageTool({
    name: "bg_fusion",
    label: "Background Fusion",
    description: DESCRIPTION,
    promptSnippet:
      "bg_fusion: ask 2-4 models the same read-only question in the background; one merged, attributed answer via bg_result",
    promptGuidelines: [
      "Use bg_fusion when a read-only question benefits from independent answers of several models (a review, a diagnosis, a design question); use bg_delegate for a single investigation.",
      "After bg_fusion, do not poll bg_result: wait for the completion notification, then call bg_result once with the run id.",
    ],
    parameters: FUSION_PARAMETERS,
    parse: (raw) => checkArguments(FUSION_FIELDS, raw),
    run: (params, toolCallId, ctx) => launcher.launch(withFusionDefaults(params), toolCallId, ctx),
  });
}
