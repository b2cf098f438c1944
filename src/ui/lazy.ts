/**
 * The package's renderers as Pi registers them at every start, their code loaded on first need
 * (docs/subsystems/launch.md, "Loading on first use"): when a session that shows a delegate starts,
 * when a tool of the package runs, or at the first call drawn. Until then a tool call is drawn as
 * Pi draws one without a renderer (its name) and the next update of it draws it in full; a notice is
 * never drawn before its renderer loaded, since a notice only comes from code that loaded it.
 */
import type { AgentToolResult, ExtensionAPI, Theme } from "@mariozechner/pi-coding-agent";
import type { Component } from "@mariozechner/pi-tui";
import { NOTIFICATION_CUSTOM_TYPE } from "../core/constants.ts";

type Renderers = typeof import("./render.ts") &
  typeof import("./fusion-render.ts") &
  typeof import("./steer-render.ts") &
  typeof import("./notice-render.ts");

let loaded: Renderers | undefined;
let loading: Promise<Renderers> | undefined;

/** Load the renderers (once); resolves when every renderer draws in full. */
export function loadRenderers(): Promise<Renderers> {
  loading ??= Promise.all([
    import("./render.ts"),
    import("./fusion-render.ts"),
    import("./steer-render.ts"),
    import("./notice-render.ts"),
  ]).then(([render, fusion, steer, notice]) => {
    loaded = { ...render, ...fusion, ...steer, ...notice };
    return loaded;
  });
  return loading;
}

/**
 * One line of text, cut to the width (the package's names are ASCII). Pi's own Text is not imported
 * here: importing Pi's modules through the extension loader costs every start time.
 */
function line(styled: (text: string) => string, text: string): Component {
  return {
    render: (width: number) => (width <= 0 || text === "" ? [] : [styled(text.slice(0, width))]),
    invalidate: () => {},
  };
}

/** Pi's own drawing of a call whose tool has no renderer: its name. */
function callFallback(name: string, theme: Theme): Component {
  void loadRenderers().catch(() => {});
  return line((text) => theme.fg("toolTitle", theme.bold(text)), name);
}

interface RenderOptions {
  expanded: boolean;
  isError: boolean;
}

/** How a tool's result is drawn by the loaded renderers. */
type DrawResult<TDetails> = (
  renderers: Renderers,
  output: AgentToolResult<TDetails>,
  options: RenderOptions,
  theme: Theme,
) => Component;

type CallRenderer = "renderDelegateCall" | "renderFusionCall" | "renderResultCall" | "renderSteerCall";

/** A tool's renderCall and renderResult, drawn by the loaded renderers. */
export function toolRenderers<TDetails>(name: string, call: CallRenderer, result: DrawResult<TDetails>) {
  return {
    renderCall: (args: unknown, theme: Theme): Component =>
      loaded === undefined ? callFallback(name, theme) : loaded[call](args, theme),
    renderResult: (
      output: AgentToolResult<TDetails>,
      options: { expanded: boolean },
      theme: Theme,
      context: { isError: boolean },
    ): Component => {
      const drawn: RenderOptions = { expanded: options.expanded, isError: context.isError };
      if (loaded === undefined) {
        void loadRenderers().catch(() => {});
        return line((text) => text, "");
      }
      return result(loaded, output, drawn, theme);
    },
  };
}

/** The notice's renderer; until the renderers load, Pi draws a notice its own way. */
export function registerNotificationRenderer(pi: ExtensionAPI): void {
  pi.registerMessageRenderer(NOTIFICATION_CUSTOM_TYPE, (message, options, theme) =>
    loaded === undefined ? undefined : loaded.notificationComponent(message, options, theme),
  );
}

/** /delegates, its code loaded when a person first runs it. */
export function registerDelegatesCommand(pi: ExtensionAPI): void {
  pi.registerCommand("delegates", {
    description:
      "Show this project's background delegates as a table (the newest that fit; more: older ones); cancel one; prune ended ones: /delegates [more | cancel [id] | prune [--older-than <days>] [--dry-run] [--undelivered] | hide]",
    handler: async (args, ctx) => (await import("./delegates-command.ts")).runDelegatesCommand(args, ctx),
  });
}
