// Name patterns in records — a policy rule's names, an `openapi` provider's include/exclude — where
// `*` matches any run of characters and the rest matches literally.

/**
 * Whether `text` matches `pattern`. Greedy with one backtrack point (the last `*`), so it takes
 * at most the product of the lengths: a pattern of many stars cannot make it backtrack
 * exponentially, as a regular expression built from it could.
 */
export function globMatch(pattern: string, text: string, ignoreCase = false): boolean {
  const p = ignoreCase ? pattern.toLowerCase() : pattern;
  const t = ignoreCase ? text.toLowerCase() : text;
  let i = 0;
  let j = 0;
  let star = -1;
  let resume = 0;
  while (j < t.length) {
    if (i < p.length && p[i] !== "*" && p[i] === t[j]) {
      i++;
      j++;
    } else if (i < p.length && p[i] === "*") {
      star = i++;
      resume = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++resume;
    } else return false;
  }
  while (i < p.length && p[i] === "*") i++;
  return i === p.length;
}
