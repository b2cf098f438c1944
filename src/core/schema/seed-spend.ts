/**
 * seed.json's spend block (docs/subsystems/child-guard.md, "The spend cap"): the cap the guard
 * enforces, the route's prices and the token counts the cap's arithmetic (../spend.ts) starts from.
 * Prices are Pi's model registry prices, US dollars per million tokens. Open, like the seed it sits
 * in: keys the guard does not read are left alone.
 */
import { violation } from "../validate.ts";
import { Amount, Count, List, Refine, type Static, Type } from "./kinds.ts";

/** Tiers a model's prices may have at most (Pi's registry has one or two). */
const MAX_PRICE_TIERS = 16;

/** US dollars per million tokens of each token class: finite, non-negative. */
const RATES = {
  input: Amount(),
  output: Amount(),
  cache_read: Amount(),
  cache_write: Amount(),
};

/** US dollars per million tokens of each token class. */
export const PriceRatesSchema = Type.Object(RATES);
export type PriceRates = Static<typeof PriceRatesSchema>;

/** Rates that apply to a request whose whole input (input, cache reads and writes) is above a size. */
export const PriceTierSchema = Type.Object({ ...RATES, input_tokens_above: Count() });
export type PriceTier = Static<typeof PriceTierSchema>;

/** A model's prices, as Pi's model registry states them (`cost` of a model, its `tiers` on Pi 1.x). */
export const SpendPricesSchema = Type.Object({
  ...RATES,
  /** The tiers by request size, when the model has them. */
  tiers: Type.Optional(List(PriceTierSchema, MAX_PRICE_TIERS)),
});
export type SpendPrices = Static<typeof SpendPricesSchema>;

/** seed.json's spend block: what the guard enforces (present only when the task has a cap). */
export const SeedSpendSchema = Type.Object({
  /** The most output tokens one request may ask for (the budget's output reserve). */
  output_reserve_tokens: Count(),
  /** The least output an answer request is given (SPEND_ANSWER_OUTPUT_TOKENS); a tool turn gets at least this too. */
  answer_output_tokens: Count(),
  /** The first request's prompt, by the budget plan's provable estimate (1 byte per token). */
  first_request_tokens: Count(),
  /** Input beyond the prompt before any usage report (tool definitions, message framing: the budget's framing reserve). */
  framing_tokens: Count(),
  /** The cap, in US dollars: a positive finite amount. */
  cap_usd: Refine(
    Amount(),
    (cap, at) => {
      if (cap <= 0) violation(at, "must be a positive amount");
    },
    "above 0",
  ),
  prices_usd_per_mtok: SpendPricesSchema,
  /** The run asks for one-hour cache writes (PI_CACHE_RETENTION=long, which the child inherits): priced as such from the first request. */
  long_cache_writes: Type.Optional(Type.Literal(true)),
});
export type SeedSpend = Static<typeof SeedSpendSchema>;
