/**
 * A refused host's text (docs/configuration.md, "Supported Pi versions"): the failed check and what was
 * seen, the proven versions and the one command that installs the newest, within
 * HOST_REFUSAL_MAX_BYTES however long what was seen, the version or the CLI path are.
 */
import { describe, expect, it } from "vitest";
import { DelegateError } from "../../src/core/errors.ts";
import { isWellFormedText } from "../../src/core/utf8.ts";
import {
  HOST_PROBE_CHECK_IDS,
  HOST_REFUSAL_MAX_BYTES,
  hostRefusalText,
  installProvenCommand,
  newestProvenVersion,
  PROVEN_PI_VERSIONS,
  probeFailureText,
  REQUIRED_CHILD_FLAGS,
  requireChildHost,
  requireHostAdmitted,
} from "../../src/host/index.ts";
import { PROBE_OUTPUT_LIMIT } from "../../src/host/probe-checks.ts";
import { thrownBy } from "../helpers/failures.ts";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

function refusalOf(admission: Parameters<typeof requireHostAdmitted>[0]): DelegateError {
  return thrownBy(() => requireHostAdmitted(admission));
}

describe("a host refusal names the next step", () => {
  it("the command installs the newest proven version of its package", () => {
    expect(newestProvenVersion()).toBe(PROVEN_PI_VERSIONS.at(-1));
    expect(installProvenCommand()).toBe(`npm i -g @earendil-works/pi-coding-agent@${PROVEN_PI_VERSIONS.at(-1)}`);
  });

  it("a failed self-proof: the check, what was seen, the proven versions, the install command, whole when short", () => {
    const checks = HOST_PROBE_CHECK_IDS.map((id) => ({
      id,
      ok: id !== "tool_call_block",
      seen: "the blocked tool ran",
    }));
    const why = probeFailureText({ checks, ok: false, durationMs: 1 });
    const error = refusalOf({ version: "1.98.0", proof: undefined, refusal: why });
    expect(error.code).toBe("delegate_hook_contract_unsupported");
    expect(error.message).toBe(
      `pi 1.98.0 is not a proven host (proven: ${PROVEN_PI_VERSIONS.join(", ")}) and ${why}. Install a proven one: ${installProvenCommand()}`,
    );
    expect(error.message).toContain("check tool_call_block");
    expect(error.message).toContain(": the blocked tool ran. Install");
  });

  it("stays within the bound at the longest inputs, shortening only what was seen", () => {
    const longSeen = "€".repeat(PROBE_OUTPUT_LIMIT); // 3 bytes each: far past any bound
    const failed = HOST_PROBE_CHECK_IDS.map((id) => ({ id, ok: false, seen: longSeen }));
    const whys = [
      probeFailureText({ checks: failed, ok: false, durationMs: 1 }),
      `its CLI has no ${REQUIRED_CHILD_FLAGS.join(", ")}, which every delegate child needs`,
      `its CLI /${"директория/".repeat(400)}dist/cli.js cannot be read`,
      `it cannot prove itself: configured pi CLI /${"x".repeat(4096)} is not a file`,
    ];
    const versions = ["1.98.0", `9.${"9".repeat(300)}.0-ünïcödé${"😀".repeat(100)}`];
    for (const version of versions) {
      for (const why of whys) {
        for (const text of [
          hostRefusalText(version, why),
          hostRefusalText(version, why, true),
          refusalOf({ version, proof: undefined, refusal: why }).message,
        ]) {
          expect(bytes(text)).toBeLessThanOrEqual(HOST_REFUSAL_MAX_BYTES);
          expect(text.endsWith(`. Install a proven one: ${installProvenCommand()}`)).toBe(true);
          expect(text).toContain(`proven: ${PROVEN_PI_VERSIONS.join(", ")}`);
          expect(text).toContain(why.slice(0, 40));
          expect(isWellFormedText(text)).toBe(true);
        }
      }
    }
    // What was seen gave way, and says so.
    expect(hostRefusalText("1.98.0", whys[0] ?? "")).toContain("…. Install");
  });

  it("a proven version refused for its install (a CLI without a flag) gets the same next step", () => {
    const error = refusalOf({
      version: "1.6.0",
      proof: undefined,
      refusal: "its CLI has no --session, which every delegate child needs",
    });
    expect(error.message).toBe(
      `pi 1.6.0 is refused (proven: ${PROVEN_PI_VERSIONS.join(", ")}): its CLI has no --session, which every delegate child needs. Install a proven one: ${installProvenCommand()}`,
    );
  });

  it("the guard in a child says the same", () => {
    let thrown: unknown;
    try {
      requireChildHost("0.99.0", { agentDir: "/nonexistent-agent-dir", cliPath: "/nonexistent/dist/cli.js" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DelegateError);
    expect((thrown as DelegateError).message).toContain(`Install a proven one: ${installProvenCommand()}`);
  });
});
