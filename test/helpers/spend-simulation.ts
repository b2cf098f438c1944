/**
 * A simulated capped child against an honest provider, run by the guard's own spend code
 * (src/child/spend.ts, src/core/spend.ts, src/core/token-estimate.ts, src/launch/spend-plan.ts):
 * the unit test (test/unit/spend-simulation.test.ts) and the bench's figure 8 use it. Every turn
 * keeps or spills real text of one of six kinds, the provider counts it at a rate drawn for that
 * kind (dense kinds down to 1 byte per token), reports input honestly, and bills output up to the
 * request's limit (often all of it). Its cache is one of the three kinds providers have: none; an
 * explicit one (Anthropic: the prefix the last request wrote is read, the rest written, five-minute
 * or one-hour writes); an automatic one (OpenAI, Google: the last request's input is read, in
 * whole blocks, nothing written). `dropAt` makes it drop its cache once, at that request.
 */
import {
  afterSpendResponse,
  beforeSpendRequest,
  keepInTurn,
  newSpendState,
  nextInputBound,
  overTurnGrowth,
} from "../../src/child/spend.ts";
import type { SpendPrices } from "../../src/core/spend.ts";
import { addClasses, classesOf, emptyClasses, type TextClasses } from "../../src/core/token-estimate.ts";
import { planSpend } from "../../src/launch/spend-plan.ts";

type Random = () => number;

/** A kind of text and the bytes per token an honest provider may count it at (drawn per run). */
interface Kind {
  name: string;
  make: (random: Random, bytes: number) => string;
  rate: [number, number];
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const between = (random: Random, [lo, hi]: [number, number]) => lo + random() * (hi - lo);

function build(random: Random, bytes: number, piece: (random: Random) => string): string {
  let text = "";
  while (text.length < bytes) text += piece(random);
  return text;
}

const LETTERS = [..."abcdefghijklmnopqrstuvwxyz"];
const B64 = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"];
const word = (random: Random, n: number) => Array.from({ length: n }, () => pick(random, LETTERS)).join("");

export const KINDS: readonly Kind[] = [
  {
    name: "prose",
    make: (r, n) => build(r, n, (x) => `${word(x, 2 + Math.floor(x() * 8))}${x() < 0.1 ? ".\n" : " "}`),
    rate: [3.2, 5],
  },
  {
    name: "code",
    make: (r, n) => build(r, n, (x) => `    const ${word(x, 6)} = ${word(x, 5)}.${word(x, 7)}(${word(x, 4)});\n`),
    rate: [2.5, 4],
  },
  {
    name: "minified",
    make: (r, n) =>
      build(r, n, (x) => `${word(x, 1)}.${word(x, 2)}(${word(x, 1)},function(){return ${word(x, 1)}+1});`),
    rate: [1, 2.5],
  },
  {
    name: "base64",
    make: (r, n) => build(r, n, (x) => Array.from({ length: 64 }, () => pick(x, B64)).join("")),
    rate: [1, 2],
  },
  {
    name: "cjk",
    make: (r, n) =>
      build(r, Math.ceil(n / 3), (x) =>
        Array.from({ length: 32 }, () => String.fromCharCode(0x4e00 + Math.floor(x() * 0x5000))).join(""),
      ),
    rate: [1, 3],
  },
  {
    name: "numbers",
    make: (r, n) => build(r, n, (x) => `${Math.floor(x() * 100_000)}${x() < 0.1 ? "\n" : " "}`),
    rate: [1, 2.5],
  },
];

/** Bytes of each pooled text; a result is a window of one. */
const POOL_BYTES = 66_000;
const pools = new Map<string, string[]>();

/** A window of about `bytes` bytes of a pooled text of this kind (pooled once: the simulation runs thousands of turns). */
function textOf(kind: Kind, random: Random, bytes: number): string {
  let pool = pools.get(kind.name);
  if (pool === undefined) {
    const seeded = prngLike(kind.name.length * 7919);
    pool = Array.from({ length: 4 }, () => kind.make(seeded, POOL_BYTES));
    pools.set(kind.name, pool);
  }
  const text = pick(random, pool);
  const chars = Math.min(text.length, Math.ceil(bytes * (text.length / Buffer.byteLength(text, "utf8"))));
  const start = Math.floor(random() * (text.length - chars));
  return text.slice(start, start + chars);
}

/** A fixed generator for the pools, so every run of the simulation sees the same texts. */
function prngLike(seed: number): Random {
  let a = seed;
  return () => {
    a = (a * 1_103_515_245 + 12_345) % 2_147_483_648;
    return a / 2_147_483_648;
  };
}

/** How the simulated provider caches (the module's header). */
export const SIM_CACHES = ["none", "explicit", "explicit-1h", "automatic"] as const;
export type SimCache = (typeof SIM_CACHES)[number];

/** The tokens the provider reports for a request of `sent` input tokens, after one of `previous` (0: none). */
function cachedSplit(cache: SimCache, sent: number, previous: number, dropped: boolean) {
  if (cache === "none" || previous === 0 || dropped) {
    const write = cache === "explicit" || cache === "explicit-1h" ? sent : 0;
    return { input: sent - write, cache_read: 0, cache_write: write };
  }
  if (cache === "automatic") {
    const read = Math.floor(Math.min(previous, sent) / 128) * 128;
    return { input: sent - read, cache_read: read, cache_write: 0 };
  }
  const read = Math.min(previous, sent);
  return { input: 0, cache_read: read, cache_write: sent - read };
}

export interface SimulatedRun {
  capUsd: number;
  spentUsd: number;
  ended: "answer" | "stop";
  /** The guard noted a response billed past its request (never, with an honest provider). */
  flagged: boolean;
  requests: number;
  kinds: string[];
  /** The guard's rows, for a failure's message. */
  rows: unknown[];
}

interface Piece {
  classes: TextClasses;
  tokens: number;
}

/** Tokens an honest provider counts for `text` at `rate` bytes per token (never more than its bytes). */
const honestTokens = (text: string, rate: number) => Math.ceil(Buffer.byteLength(text, "utf8") / rate);

/** One capped child: turns of 1-3 tool results of 0-40 KB until the guard asks for the answer or stops. */
export function simulateRun(
  random: Random,
  prices: SpendPrices,
  capUsd: number,
  promptTokens: number,
  cache: SimCache,
  dropAt = 0,
): SimulatedRun {
  const spend = planSpend(capUsd, { provider: "sim", model: "sim", prices }, promptTokens, cache === "explicit-1h");
  if (spend === undefined) throw new Error("no spend block");
  const state = newSpendState();
  const rates = new Map(KINDS.map((k) => [k.name, between(random, k.rate)]));
  state.cache.longWrites = spend.long_cache_writes === true;
  let previousSent = 0;
  // The real first request: the prompt at 2-4 bytes per token, the tools within the framing reserve.
  const base = Math.ceil(promptTokens / (2 + random() * 2)) + Math.floor(random() * spend.framing_tokens);
  const transcript: Piece[] = [];
  const kinds: string[] = [];
  const notice = 120;
  const run = (ended: "answer" | "stop", requests: number): SimulatedRun => ({
    capUsd,
    spentUsd: state.spentUsd,
    ended,
    flagged: state.overbilled !== undefined,

    requests,
    kinds,
    rows: state.rows,
  });
  for (let request = 1; request < 1_000; request++) {
    if (state.overbilled !== undefined) return run("stop", request);
    const classes = transcript.reduce((sum, p) => addClasses(sum, p.classes), emptyClasses());
    const input = nextInputBound(spend, state, classes, notice + 32);
    const decision = beforeSpendRequest(state, spend, request, input, classes);
    if (decision === "stop") return run("stop", request);
    const limit = state.rows.at(-1)?.output_limit_tokens ?? 0;
    const sent = base + transcript.reduce((sum, p) => sum + p.tokens, 0) + (decision === "finalize" ? notice : 0);
    const output = random() < 0.3 ? limit : Math.ceil(random() * limit);
    const split = cachedSplit(cache, sent, previousSent, request === dropAt);
    const tokens = {
      ...split,
      output,
      cache_write_long: cache === "explicit-1h" ? split.cache_write : 0,
    };
    previousSent = sent;
    // What the model wrote, re-sent as input from the next request on (prose, 4 bytes per output token at most).
    const prose = KINDS[0] as Kind;
    let said = "";
    while (Buffer.byteLength(said, "utf8") < output * 4)
      said += textOf(prose, random, Math.min(POOL_BYTES, output * 4));
    const saidClasses = { ...classesOf(said), messages: 1 };
    afterSpendResponse(state, spend, random() < 0.05 ? undefined : tokens, true, saidClasses, notice + 32);
    if (decision === "finalize") return run("answer", request);
    transcript.push({ classes: saidClasses, tokens: output + 32 });
    for (let i = 0, n = 1 + Math.floor(random() * 3); i < n; i++) {
      const kind = pick(random, KINDS);
      kinds.push(kind.name);
      const text = textOf(kind, random, Math.floor(random() * 40_000));
      const rate = rates.get(kind.name) ?? 1;
      const kept = overTurnGrowth(state, spend, classesOf(text))
        ? "[delegate spill] the result was kept out of the context to leave the cap room for your answer."
        : text;
      const keptClasses = classesOf(kept);
      keepInTurn(state, keptClasses);
      transcript.push({
        classes: { ...keptClasses, messages: 1 },
        tokens: honestTokens(kept, kept === text ? rate : 4) + 32,
      });
    }
  }
  throw new Error("the simulated child never ended");
}

/** Routes of the simulation: Sonnet-like with cache prices, a flat $10/M, a dear output. */
export const SIM_ROUTES: readonly SpendPrices[] = [
  { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  { input: 10, output: 10, cache_read: 0, cache_write: 0 },
  { input: 0.5, output: 60, cache_read: 0.05, cache_write: 0.6 },
];
