/** Small display helpers every dashboard page uses. */

/** A count with its noun: "1 like", "0 likes", "1,204 responses". */
export function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}
