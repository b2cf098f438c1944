/**
 * The host probe's isolation checks on real Pi (docs/configuration.md, "Self-proof"): each witness
 * the probe plants reaches a child that lacks its flag, so its check can fail, and fails naming the
 * flag. The probe is run with one off flag withheld (for --no-approve: --approve in its place) and
 * exactly that flag's check fails; with every flag, every check passes (host-probe.test.ts). A flag
 * the host does not have (0.73.1 has no --no-mcp, no --no-approve) is not withheld.
 */
import { describe, expect, it } from "vitest";
import {
  CHILD_OFF_FLAGS,
  type ChildOffFlag,
  type HostCapabilities,
  isolatedHostFlags,
  readHostCapabilities,
  runHostProbe,
} from "../../src/host/index.ts";
import { HOST, PI_CLI_PATH } from "../helpers/pi-paths.ts";
import { findProcesses } from "../helpers/temp.ts";

const INSTEAD: Partial<Record<ChildOffFlag, string[]>> = { "--no-approve": ["--approve"] };

/** The off flags whose witness the probe plants (--no-builtin-tools is tools_restricted's, shown by host copies). */
const WITNESSED = (Object.keys(CHILD_OFF_FLAGS) as ChildOffFlag[]).filter(
  (flag) => CHILD_OFF_FLAGS[flag] !== null && flag !== "--no-builtin-tools",
);

let capabilities: HostCapabilities | undefined;

async function hostFlags(): Promise<string[]> {
  capabilities ??= await readHostCapabilities(PI_CLI_PATH, process.execPath);
  return isolatedHostFlags(capabilities);
}

describe(`the probe's witnesses on pi ${HOST.version}`, () => {
  for (const flag of WITNESSED) {
    it(`without ${flag}, its witness reaches the child and check ${CHILD_OFF_FLAGS[flag]} fails naming it`, async (ctx) => {
      const flags = await hostFlags();
      const common = !["--no-mcp", "--no-approve"].includes(flag);
      if (!common && !flags.includes(flag)) ctx.skip();
      const sdk = (await import(HOST.sdkUrl)) as { CURRENT_SESSION_VERSION: number };
      const report = await runHostProbe(
        {
          nodePath: process.execPath,
          piCli: PI_CLI_PATH,
          sessionVersion: sdk.CURRENT_SESSION_VERSION,
          hostFlags: flags,
        },
        { withhold: { flag, instead: INSTEAD[flag] } },
      );
      const failed = report.checks.filter((c) => !c.ok);
      expect(failed.map((c) => c.id)).toEqual([CHILD_OFF_FLAGS[flag]]);
      expect(failed[0]?.seen).toContain(flag === "--no-mcp" ? "--no-mcp" : `${flag} was ignored`);
      expect(report.ok).toBe(false);
      expect(await findProcesses("pi-bg-delegate-probe-")).toEqual([]);
    });
  }
});
