/**
 * prove-host with a `pi` that is a wrapper script (docs/cli.md, "prove-host"): refused before any
 * process starts, with a remediation that names the flag to pass, not prove-host itself again.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DelegateError } from "../../src/core/errors.ts";
import { hostFacts, WRAPPER_REMEDIATION } from "../../src/host/prove.ts";

const dir = mkdtempSync(join(tmpdir(), "prove-wrapper-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("prove-host with a wrapper pi", () => {
  it("names the --pi flag to pass", async () => {
    const wrapper = join(dir, "pi");
    writeFileSync(wrapper, '#!/bin/sh\nexec node /somewhere/dist/cli.js "$@"\n', { mode: 0o755 });
    const error = await hostFacts(process.execPath, wrapper).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DelegateError);
    const typed = error as DelegateError;
    expect(typed.code).toBe("delegate_hook_contract_unsupported");
    expect(typed.message).toContain("wrapper script");
    expect(typed.facts.remediation).toBe(WRAPPER_REMEDIATION);
    expect(typed.facts.remediation).toContain("--pi <Pi's package>/dist/cli.js");
  });
});
