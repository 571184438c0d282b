import { AppError } from './errors';

/**
 * In-process token buckets (one process serves the product; with several processes each keeps
 * its own, which only loosens the limit by the number of processes).
 */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly capacity: number, private readonly perMs: number) {}

  /** Takes one token; returns 0 when allowed, else the seconds to wait. */
  take(key: string, now = Date.now()): number {
    const rate = this.capacity / this.perMs;
    const b = this.buckets.get(key) ?? { tokens: this.capacity, at: now };
    b.tokens = Math.min(this.capacity, b.tokens + (now - b.at) * rate);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.buckets.set(key, b);
      if (this.buckets.size > 50_000) this.sweep(now);
      return 0;
    }
    this.buckets.set(key, b);
    return Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000));
  }

  /** Throws a 429 AppError with Retry-After when the bucket is empty. */
  enforce(key: string, what: string): void {
    const wait = this.take(key);
    if (wait > 0) {
      throw new AppError('rate_limited', `Too many ${what}; retry in ${wait} s.`, { headers: { 'Retry-After': String(wait) } });
    }
  }

  private sweep(now: number) {
    for (const [k, b] of this.buckets) if (now - b.at > this.perMs) this.buckets.delete(k);
  }
}
