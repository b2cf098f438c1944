/**
 * How Pi marks its own built-in tools apart from an extension's: what the guard's tool-source check and
 * the host probe's shadow check both rest on.
 */

/** The slice of pi's ToolInfo the check reads. */
export interface ToolSource {
  name: string;
  sourceInfo: { path: string; source: string };
}

/**
 * pi's own marking of a built-in tool: source "builtin" (only pi assigns it; an extension's tools carry
 * the extension's path) and the path `<builtin:name>` (0.73.1) or `builtin:name` (1.6.0), as the
 * host-proof suite records on each host.
 */
export function isBuiltinSource(name: string, info: ToolSource["sourceInfo"]): boolean {
  return info.source === "builtin" && (info.path === `<builtin:${name}>` || info.path === `builtin:${name}`);
}
