// The risk score of a verified request (verificationData.score; PROTOCOL.md: GOOD < 1 ≤ NEUTRAL < 2
// ≤ BAD) from what the abuse protection knows of the client IP:
//
//   x     = penalty / 4 + failedAttempts / 2
//   score = 3x / (x + 2)          (floored to 2 decimals)
//
// A clean client (0, 0) scores 0. The score rises with both and saturates below 3. NEUTRAL begins
// at x = 1, BAD at x = 4 (penalty 16, or 8 failed attempts). Examples with the default points
// (index.ts: a failed solution adds 1 point and 1 attempt): one header-entropy point 0.33 (GOOD),
// one failed solution 0.81 (GOOD), two 1.28 (NEUTRAL), a probe mark (8) plus 3 probes 1.73
// (NEUTRAL), six failed solutions 2.07 (BAD).
export function score(penalty: number, failedAttempts: number): number {
  const p = penalty > 0 && Number.isFinite(penalty) ? penalty : 0;
  const f = failedAttempts > 0 && Number.isFinite(failedAttempts) ? failedAttempts : 0;
  const x = p / 4 + f / 2;
  // Floored, so the classification of the rounded score is that of the exact one.
  return Math.floor((300 * x) / (x + 2)) / 100;
}
