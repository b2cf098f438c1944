/**
 * What the guard checks about its host before the first model call: the pi version is one the
 * host-proof suite passed on, the resolved model is exactly the pin (pi's --model is fuzzy), and every
 * allowed tool name is served by pi's built-in tool or by this guard (an ambient extension can
 * register its own `read` and shadow the built-in).
 */
import { realpathSync } from "node:fs";
import { CHILD_BUILTIN_TOOLS, CHILD_TOOLS, READ_ARTIFACT_TOOL } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { PinnedRoute } from "../core/types.ts";
import { isBuiltinSource, type ToolSource } from "../host/index.ts";

export function checkResolvedModel(model: { provider: string; id: string } | undefined, pin: PinnedRoute): void {
  if (model === undefined) throw new DelegateError("route_mismatch", "the child resolved no model");
  if (model.provider !== pin.provider || model.id !== pin.model) {
    throw new DelegateError(
      "route_mismatch",
      `the child resolved ${model.provider}/${model.id}, the pin is ${pin.provider}/${pin.model}`,
    );
  }
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * Every tool pi has configured must be an allowed name, built-ins must be pi's own (except those in
 * `guardServed`, which this guard registered itself), and delegate_read_artifact must be the one this
 * guard (at `guardPath`) registered.
 */
export function checkToolSources(
  tools: readonly ToolSource[],
  active: readonly string[],
  guardPath: string,
  guardServed: readonly string[] = [],
): void {
  const refuse = (message: string): never => {
    throw new DelegateError("delegate_isolation_unsupported", message);
  };
  const allowed: readonly string[] = CHILD_TOOLS;
  for (const name of active) {
    if (!allowed.includes(name)) refuse(`tool ${name} is active in the child; only ${CHILD_TOOLS.join(", ")} may be`);
  }
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const tool of tools) {
    if (!allowed.includes(tool.name)) refuse(`tool ${tool.name} is configured in the child; it is not allowed`);
  }
  for (const name of CHILD_BUILTIN_TOOLS) {
    const tool = byName.get(name);
    if (tool === undefined) continue; // pi refuses calls to it; nothing can shadow a missing tool
    if (guardServed.includes(name)) {
      // Served by this guard on purpose (find without fd): it must be the guard's own registration.
      if (!samePath(tool.sourceInfo.path, guardPath)) {
        refuse(
          `tool ${name} is served by ${tool.sourceInfo.path} (${tool.sourceInfo.source}), not by the delegate guard`,
        );
      }
      continue;
    }
    if (!isBuiltinSource(name, tool.sourceInfo)) {
      refuse(`tool ${name} is served by ${tool.sourceInfo.path} (${tool.sourceInfo.source}), not pi's built-in`);
    }
  }
  const own = byName.get(READ_ARTIFACT_TOOL);
  if (own === undefined) refuse(`${READ_ARTIFACT_TOOL} is not registered`);
  else if (!samePath(own.sourceInfo.path, guardPath)) {
    refuse(`${READ_ARTIFACT_TOOL} is served by ${own.sourceInfo.path}, not by the delegate guard`);
  }
}
