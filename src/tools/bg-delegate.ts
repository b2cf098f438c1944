import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import {
  DELEGATE_FIELDS,
  DELEGATE_PARAMETERS,
  type DelegateArguments,
  withDelegateDefaults,
} from "../arguments/delegate-arguments.ts";
import { checkArguments } from "../arguments/fields.ts";
import { packageTool } from "./define.ts";

export interface DelegateLauncher<TDetails> {
  launch(args: DelegateArguments, toolCallId: string, ctx: ExtensionContext): Promise<AgentToolResult<TDetails>>;
}

const DESCRIPTION =
  "Start one background Pi agent that investigates read-only (read, grep, find, ls) on a model route pinned now and " +
  "never substituted. It receives a frozen, hash-accounted copy of this conversation and its own session, and this " +
  "call returns a receipt at once. When it ends you get one notification; then fetch the verified answer with " +
  'bg_result. Extensions are not loaded in the child unless extensionMode is "ambient".';

export function createBgDelegateTool<TDetails>(
  launcher: DelegateLauncher<TDetails>,
): ToolDefinition<typeof DELEGATE_PARAMETERS, TDetails> {
  return packageTool({
    name: "bg_delegate",
    label: "Background Delegate",
    description: DESCRIPTION,
    promptSnippet: "bg_delegate: hand a read-only investigation to a background Pi agent; fetch it with bg_result",
    promptGuidelines: [
      "Use bg_delegate for a self-contained read-only investigation that can run while you work; restate in its prompt any fact that only a tool result showed, because tool output is not copied to the delegate.",
      "After bg_delegate, do not poll bg_result in a loop: wait for the completion notification, then call bg_result once.",
    ],
    parameters: DELEGATE_PARAMETERS,
    parse: (raw) => checkArguments(DELEGATE_FIELDS, raw),
    run: (params, toolCallId, ctx) => launcher.launch(withDelegateDefaults(params), toolCallId, ctx),
  });
}
