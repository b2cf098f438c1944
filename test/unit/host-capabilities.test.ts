/**
 * The host's CLI flags, read from the host without running any file of a configured path in this
 * process (docs/configuration.md, "How the child's Pi is found"): a fake Pi package whose
 * dist/cli/args.js leaves a witness file named by the pid of the process that imported it.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPTIONAL_CHILD_FLAGS } from "../../src/host/capabilities.ts";
import { REQUIRED_CHILD_FLAGS, readHostCapabilities } from "../../src/host/index.ts";
import { witnessArgsJs } from "../helpers/sample-sources.ts";
import { makeTempDir } from "../helpers/temp.ts";

interface FakePackage {
  cli: string;
  witnesses: () => string[];
}

/** A Pi package whose parser knows every child flag but `unknown`, and whose import leaves a witness. */
async function fakePackage(label: string, argsJs?: string, unknown = "--session"): Promise<FakePackage> {
  const dir = await makeTempDir(label, "each");
  const witnessDir = join(dir, "witness");
  mkdirSync(witnessDir);
  mkdirSync(join(dir, "dist", "cli"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ version: "1.99.0", type: "module" }));
  const cli = join(dir, "dist", "cli.js");
  writeFileSync(
    cli,
    `console.log(${JSON.stringify([...REQUIRED_CHILD_FLAGS].filter((f) => f !== unknown).map((f) => `  ${f}`))}.join("\\n"));\n`,
  );
  const known = [...REQUIRED_CHILD_FLAGS, ...OPTIONAL_CHILD_FLAGS].filter((f) => f !== unknown);
  writeFileSync(join(dir, "dist", "cli", "args.js"), argsJs ?? witnessArgsJs(witnessDir, known));
  return { cli, witnesses: () => readdirSync(witnessDir) };
}

describe("the host's flags, read without importing a configured file here", () => {
  it("a configured CLI's parser runs in a child process of the given Node, once per process", async () => {
    const fake = await fakePackage("caps-child");
    const caps = await readHostCapabilities(fake.cli, process.execPath, "/usr/bin/not-pi");
    expect(caps).toEqual({ noMcp: true, projectTrust: true, missing: ["--session"], source: "parse_args" });
    const seen = fake.witnesses();
    expect(seen).toHaveLength(1);
    expect(seen).not.toContain(String(process.pid));
    // Asked again: the answer is cached, no second child.
    expect(await readHostCapabilities(fake.cli, process.execPath, "/usr/bin/not-pi")).toBe(caps);
    expect(fake.witnesses()).toEqual(seen);
  });

  it("the running Pi's own CLI (process.argv[1]) is read in this process: its own package", async () => {
    const fake = await fakePackage("caps-own");
    const caps = await readHostCapabilities(fake.cli, process.execPath, fake.cli);
    expect(caps.missing).toEqual(["--session"]);
    expect(fake.witnesses()).toEqual([String(process.pid)]);
  });

  it("a package whose args.js has no parser, or throws on import, is asked through --help in a child", async () => {
    for (const argsJs of ["export const other = 1;\n", 'throw new Error("broken");\n']) {
      const fake = await fakePackage("caps-help", argsJs, "--tools");
      const caps = await readHostCapabilities(fake.cli, process.execPath, "/usr/bin/not-pi");
      expect(caps).toEqual({ noMcp: false, projectTrust: false, missing: ["--tools"], source: "help" });
    }
  });

  it("a Node that does not run knows no flag: every required one is missing", async () => {
    const fake = await fakePackage("caps-nonode");
    const caps = await readHostCapabilities(fake.cli, join(fake.cli, "..", "no-such-node"), "/usr/bin/not-pi");
    expect(caps).toEqual({ noMcp: false, projectTrust: false, missing: REQUIRED_CHILD_FLAGS, source: "help" });
    expect(fake.witnesses()).toEqual([]);
  });
});
