/**
 * The `pi-bg-delegate` command (docs/cli.md): parse, resolve the id with bg_result's rules, run one
 * command, return its exit status. Failures read exactly as the tools' (docs/failure-codes.md, "How a
 * failure reads"). Nothing imports this folder; bin/pi-bg-delegate.mjs loads it.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DelegateError } from "../core/errors.ts";
import { renderFailure } from "../core/failure-text.ts";
import { writeFileAtomic } from "../core/fs.ts";
import { formatBytes } from "../core/units.ts";
import { pruneTasks } from "../retrieval/prune.ts";
import { resolveTaskRef } from "../store/lookup.ts";
import { EXIT, helpText, type ParsedCommand, parseArgs, UsageError } from "./args.ts";
import { cancelTask } from "./cancel.ts";
import { proveHost } from "./prove-host.ts";
import { pruneJson, renderPrune } from "./prune.ts";
import { LIST_SCHEMA, renderFacts, renderList } from "./render.ts";
import { waitForAnswer } from "./result.ts";
import { listRows } from "./rows.ts";
import { taskFacts } from "./show.ts";
import { renderVerify, verifyTask } from "./verify.ts";

export interface CliIo {
  cwd: string;
  stdout(data: string | Uint8Array): void;
  stderr(text: string): void;
}

/** The id resolved as bg_result resolves it; this process has seen no task, so nothing is "known". */
function resolveRef(io: CliIo, id: string) {
  return resolveTaskRef(io.cwd, id, new Map());
}

function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

async function list(io: CliIo, p: ParsedCommand): Promise<number> {
  const every = await listRows(io.cwd, true);
  const rows = p.all ? every : await listRows(io.cwd, false);
  if (p.json) printJson(io, { schema_version: LIST_SCHEMA, all: p.all, tasks: rows });
  else io.stdout(`${renderList(rows, p.all, every.length - rows.length)}\n`);
  return EXIT.ok;
}

async function show(io: CliIo, p: ParsedCommand): Promise<number> {
  const facts = await taskFacts(resolveRef(io, p.id!));
  if (p.json) printJson(io, facts);
  else io.stdout(`${renderFacts(facts)}\n`);
  return EXIT.ok;
}

async function verify(io: CliIo, p: ParsedCommand): Promise<number> {
  const { report, error } = await verifyTask(resolveRef(io, p.id!));
  if (p.json) printJson(io, report);
  else io.stdout(`${renderVerify(report)}\n`);
  if (error) io.stderr(`${renderFailure(error)}\n`);
  return report.outcome === "verified" ? EXIT.ok : report.outcome === "running" ? EXIT.running : EXIT.failure;
}

/** --out must name a file in an existing directory, checked before any wait (bad input changes nothing). */
function checkOut(out: string | undefined, cwd: string): string | undefined {
  if (out === undefined) return undefined;
  const path = resolve(cwd, out);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--out: ${dir} is not a directory`, "result");
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`--out: ${path} is a directory`, "result");
  return path;
}

async function result(io: CliIo, p: ParsedCommand): Promise<number> {
  const out = checkOut(p.out, io.cwd);
  const ref = resolveRef(io, p.id!);
  const started = Date.now();
  const answer = await waitForAnswer(ref, p.waitSeconds ?? 0, () =>
    io.stderr(`${ref.id} is running; waiting up to ${p.waitSeconds}s for it (read-only: it is never cancelled)…\n`),
  );
  if (answer.kind === "running") {
    const waited = p.waitSeconds === undefined ? "" : ` after waiting ${Math.round((Date.now() - started) / 1000)}s`;
    io.stderr(`${ref.id} is still running${waited}; nothing was cancelled or changed. Try again later.\n`);
    return EXIT.running;
  }
  if (out === undefined) {
    io.stdout(answer.bytes);
    return EXIT.ok;
  }
  writeFileAtomic(out, answer.bytes);
  io.stderr(`Wrote the verified answer of ${ref.id} (${formatBytes(answer.bytes.length)}) to ${out}\n`);
  return EXIT.ok;
}

async function prune(io: CliIo, p: ParsedCommand): Promise<number> {
  const outcome = await pruneTasks(
    io.cwd,
    { olderThanDays: p.olderThanDays, keep: p.keep, undelivered: p.undelivered },
    { dryRun: p.dryRun },
  );
  if (p.json) printJson(io, pruneJson(outcome));
  else io.stdout(`${renderPrune(outcome)}\n`);
  for (const { candidate, message } of outcome.errors) io.stderr(`could not remove ${candidate.id}: ${message}\n`);
  return outcome.errors.length === 0 ? EXIT.ok : EXIT.failure;
}

const RUNNERS = {
  list,
  show,
  verify,
  result,
  cancel: (io: CliIo, p: ParsedCommand) => cancelTask(io, resolveRef(io, p.id!)),
  prune,
  "prove-host": (io: CliIo, p: ParsedCommand) => proveHost(io, p),
} satisfies Record<ParsedCommand["command"], (io: CliIo, p: ParsedCommand) => Promise<number> | number>;

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const invocation = parseArgs(argv);
    if (invocation.kind === "help") {
      io.stdout(`${helpText(invocation.command)}\n`);
      return EXIT.ok;
    }
    return await RUNNERS[invocation.parsed.command](io, invocation.parsed);
  } catch (error) {
    if (error instanceof UsageError) {
      const hint = error.command ? `pi-bg-delegate ${error.command} --help` : "pi-bg-delegate --help";
      io.stderr(`pi-bg-delegate: ${error.message}\nSee: ${hint}\n`);
      return EXIT.usage;
    }
    if (error instanceof DelegateError) {
      io.stderr(`${renderFailure(error)}\n`);
      return EXIT.failure;
    }
    throw error;
  }
}
