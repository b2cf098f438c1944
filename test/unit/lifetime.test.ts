/**
 * Which processes wait for their delegates (docs/configuration.md, "Non-interactive Pi"): the
 * `pi` command in print or json mode, on either host's way of saying so; never an SDK host, an RPC
 * Pi or the TUI.
 */
import { describe, expect, it } from "vitest";
import { loadSettings } from "../../src/core/settings.ts";
import { nonInteractiveMode } from "../../src/lifetime.ts";
import { HOST, PI_CLI_PATH } from "../helpers/pi-paths.ts";
import { makeTempDir } from "../helpers/temp.ts";

const node = process.execPath;

describe(`nonInteractiveMode (with ${HOST.version}'s CLI path)`, () => {
  it("Pi 1.x's ctx.mode decides for the pi command", () => {
    expect(nonInteractiveMode({ hasUI: false, mode: "print" } as never, [node, PI_CLI_PATH, "-p", "x"])).toBe("print");
    expect(nonInteractiveMode({ hasUI: false, mode: "json" } as never, [node, PI_CLI_PATH, "--mode", "json"])).toBe(
      "json",
    );
    expect(
      nonInteractiveMode({ hasUI: true, mode: "rpc" } as never, [node, PI_CLI_PATH, "--mode", "rpc"]),
    ).toBeUndefined();
    expect(nonInteractiveMode({ hasUI: true, mode: "tui" } as never, [node, PI_CLI_PATH])).toBeUndefined();
  });

  it("Pi 0.73.1 (no ctx.mode): the command line without UI", () => {
    expect(nonInteractiveMode({ hasUI: false }, [node, PI_CLI_PATH, "-p", "go"])).toBe("print");
    expect(nonInteractiveMode({ hasUI: false }, [node, PI_CLI_PATH, "--print", "go"])).toBe("print");
    expect(nonInteractiveMode({ hasUI: false }, [node, PI_CLI_PATH, "--mode", "json", "go"])).toBe("json");
    expect(nonInteractiveMode({ hasUI: false }, [node, PI_CLI_PATH, "--mode", "rpc"])).toBeUndefined();
    expect(nonInteractiveMode({ hasUI: true }, [node, PI_CLI_PATH])).toBeUndefined();
  });

  it("an SDK host (its own script, not Pi's CLI) owns its lifetime, whatever its session's mode", () => {
    expect(
      nonInteractiveMode({ hasUI: false, mode: "print" } as never, [node, "/srv/my-app.js", "-p"]),
    ).toBeUndefined();
    expect(nonInteractiveMode({ hasUI: false }, [node, "/srv/my-app.js", "-p"])).toBeUndefined();
  });

  it("bgDelegate.nonInteractive is wait by default; cancel from settings or the environment; junk is ignored", async () => {
    const dir = await makeTempDir("lifetime");
    expect(loadSettings(dir, dir, {}).nonInteractive).toBe("wait");
    expect(loadSettings(dir, dir, { PI_BG_DELEGATE_NON_INTERACTIVE: "cancel" }).nonInteractive).toBe("cancel");
    expect(loadSettings(dir, dir, { PI_BG_DELEGATE_NON_INTERACTIVE: "maybe" }).nonInteractive).toBe("wait");
  });
});
