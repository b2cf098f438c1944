/** What the seed tests append to a host's own SessionManager (test/integration/seed-*.test.ts). */

/** The usage of a one-token scripted reply, at no cost: what an appended assistant message carries. */
export const ONE_TOKEN_USAGE = {
  input: 1,
  output: 1,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 2,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
