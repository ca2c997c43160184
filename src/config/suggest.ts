/** "Did you mean": the name an unknown key was most likely meant to be, by edit distance. */

/** The candidate within two edits of `key` (case ignored), the nearest first; none when nothing is that near. */
export function closestName(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = 3;
  for (const candidate of candidates) {
    const score = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (score < bestScore) [best, bestScore] = [candidate, score];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
