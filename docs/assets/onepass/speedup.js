/**
 * The speed-up formula, mirroring py/onepass/speedup.py (the site tests compare the two on a grid).
 *
 * With a draft of gamma tokens, each right with probability alpha, one verifying pass yields on average
 * (1 - alpha^(gamma+1)) / (1 - alpha) tokens (gamma + 1 when alpha = 1); with each draft token costing
 * c passes, the speed-up over greedy decoding is that divided by (gamma * c + 1).
 * Reference: Leviathan, Kalman & Matias (2023), equation 1 and Theorem 3.8.
 */

// The longest draft the chart draws, as py/onepass/speedup.py's: long enough to show the best length even for a
// very good, cheap draft (with c = 0 longer is always better).
export const MAX_GAMMA = 20;

export function expectedTokens(alpha, gamma) {
  if (!(alpha >= 0 && alpha <= 1) || !(gamma >= 0)) {
    throw new RangeError(`need 0 <= alpha <= 1 and gamma >= 0, got alpha=${alpha}, gamma=${gamma}`);
  }
  // At alpha = 1 the formula is 0/0; its limit is every draft token plus the bonus.
  if (alpha === 1) return gamma + 1;
  return (1 - alpha ** (gamma + 1)) / (1 - alpha);
}

export function speedup(alpha, gamma, c) {
  if (!(c >= 0)) throw new RangeError(`the draft's cost ratio c cannot be negative, got ${c}`);
  return expectedTokens(alpha, gamma) / (gamma * c + 1);
}

/** The draft length among `gammas` with the largest speed-up (the shortest one on ties). */
export function bestGamma(alpha, c, gammas) {
  return gammas.reduce((best, gamma) => (speedup(alpha, gamma, c) > speedup(alpha, best, c) ? gamma : best));
}
