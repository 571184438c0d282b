/**
 * Deterministic benchmark dataset (seeded PRNG): conversations and responses as an NDJSON import
 * file in the format of docs/contracts.md §3. Same options → byte-identical file.
 *
 * Shape: 20 channels of skewed size; Zipf–Mandelbrot conversation sizes (s = 1, q = 5: at 1M
 * responses the largest conversation has ~15k responses, the median 2); question 50–220 and
 * answer 80–300 characters from a Zipf-weighted vocabulary; one rare term in exactly
 * RARE_TERM_ROWS rows and one common term in ~1% of rows; created_at over one year (2024, UTC,
 * second resolution) with ties (bursts inside a conversation, plus the natural collisions of
 * 1M timestamps in 31.6M seconds).
 */
import fs from 'node:fs';

export const RARE_TERM = 'quasarflux';
export const RARE_TERM_ROWS = 5;
export const COMMON_TERM = 'warranty';
export const COMMON_TERM_RATE = 0.01;
/** A channel name, and a term in ~1% of conversation titles. */
export const CONVERSATION_TERM = 'billing';
export const GENERATOR_VERSION = 1;

export const CHANNEL_NAMES = [
  'Website',
  'Billing',
  'Mobile App',
  'Support EU',
  'Support US',
  'Sales',
  'Onboarding',
  'Partners',
  'Enterprise',
  'Help Center',
  'WhatsApp',
  'Slack',
  'Email',
  'Shop',
  'Docs',
  'Careers',
  'Developers',
  'Status Page',
  'Community',
  'Internal',
] as const;
export const FIRST_CHANNEL_ID = 900_001;

const YEAR_START = Date.UTC(2024, 0, 1) / 1000;
const YEAR_SECONDS = 366 * 86_400;

/** sfc32 seeded through splitmix32: fast, good enough, identical on every platform. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number) {
    let s = seed >>> 0;
    const mix = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.u32();
  }
  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }
  /** [0, 1) */
  next(): number {
    return this.u32() / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  uuid(): string {
    const h = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
    const x = h(this.u32()) + h(this.u32()) + h(this.u32()) + h(this.u32());
    const variant = ((parseInt(x[16]!, 16) & 0x3) | 0x8).toString(16);
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-4${x.slice(13, 16)}-${variant}${x.slice(17, 20)}-${x.slice(20, 32)}`;
  }
}

/** Cumulative-weight sampler over a fixed list (binary search). */
class Weighted {
  private cum: Float64Array;
  constructor(weights: number[]) {
    this.cum = new Float64Array(weights.length);
    let s = 0;
    weights.forEach((w, i) => {
      s += w;
      this.cum[i] = s;
    });
  }
  pick(rng: Rng): number {
    const x = rng.next() * this.cum[this.cum.length - 1]!;
    let lo = 0;
    let hi = this.cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cum[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

const COMMON_WORDS = (
  'the a to and of is in it you for my on i can how this that with not be do does your we our have ' +
  'account order payment password login app email page error when why what where help please thanks ' +
  'customer support update change cancel subscription plan invoice price delivery shipping return ' +
  'product item device phone setting settings profile data export import report team user users admin ' +
  'access permission link button screen message notification sync issue problem working broken slow ' +
  'fast again still after before today yesterday week month year time number card bank transfer ' +
  'address name company store online offline version install download upload file files document ' +
  'contract renewal discount coupon code trial free premium upgrade downgrade feature request bug ' +
  'integration api key token webhook calendar booking appointment ticket status open closed refund ' +
  'charge charged twice receipt tax country language french german spanish mobile desktop browser ' +
  'chrome safari firefox android iphone tablet window menu dashboard chart table search filter ' +
  'sort page loading timeout network connection server backup restore delete remove add create new ' +
  'old reset verify verification code sms two factor security privacy policy terms gdpr consent ' +
  'cookie tracking analytics campaign newsletter unsubscribe café naïve résumé über straße'
).split(/\s+/);

function pseudoWords(rng: Rng, n: number): string[] {
  const cons = ['b', 'c', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'st', 'tr', 'pl', 'gr', 'ch', 'sh'];
  const vow = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou', 'ea', 'io'];
  const out = new Set<string>();
  const banned = [RARE_TERM, COMMON_TERM, CONVERSATION_TERM];
  for (let guard = 0; out.size < n && guard < n * 20; guard++) {
    const syll = 2 + rng.int(3);
    let w = '';
    for (let i = 0; i < syll; i++) w += cons[rng.int(cons.length)]! + vow[rng.int(vow.length)]!;
    if (rng.next() < 0.3) w += cons[rng.int(cons.length)]!;
    if (!banned.some((b) => w.includes(b))) out.add(w);
  }
  return [...out];
}

export type DatasetOptions = { conversations: number; responses: number; seed: number };
export type DatasetSummary = DatasetOptions & {
  file: string;
  bytes: number;
  seconds: number;
  rareTermRows: number;
  commonTermRows: number;
  conversationTermTitles: number;
  largestConversation: number;
  medianConversation: number;
  channels: number;
};

/**
 * Writes the dataset to `file` (conversations first, then the responses of each conversation,
 * so every response follows its conversation). Streams; memory is O(responses) small ints.
 */
export async function generateDataset(file: string, opts: DatasetOptions): Promise<DatasetSummary> {
  const started = Date.now();
  const { conversations: C, responses: R } = opts;
  if (!(C >= 1 && R >= C)) throw new Error(`need responses >= conversations >= 1 (got ${C} / ${R})`);
  const rng = new Rng(opts.seed);

  // Channels of skewed size.
  const channelPick = new Weighted(CHANNEL_NAMES.map((_, i) => 1 / Math.pow(i + 1, 0.8)));

  // Conversation sizes: 1 + a Zipf–Mandelbrot share of the rest; ranks shuffled over conversations.
  const sizes = new Int32Array(C);
  {
    const weights = new Float64Array(C);
    let sum = 0;
    for (let r = 0; r < C; r++) {
      weights[r] = 1 / (r + 1 + 5);
      sum += weights[r]!;
    }
    const extra = R - C;
    let assigned = 0;
    for (let r = 0; r < C; r++) {
      sizes[r] = 1 + Math.floor((extra * weights[r]!) / sum);
      assigned += sizes[r]!;
    }
    for (let r = 0; assigned < R; r = (r + 1) % C) {
      sizes[r]!++;
      assigned++;
    }
    for (let i = C - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      const t = sizes[i]!;
      sizes[i] = sizes[j]!;
      sizes[j] = t;
    }
  }

  // Timestamps (seconds since YEAR_START): conversations uniform over the year; responses after
  // their conversation's start, in order, with bursts that share a second.
  const convCreated = new Int32Array(C);
  const convChannel = new Int16Array(C);
  const respTime = new Int32Array(R);
  const convUpdated = new Int32Array(C);
  let k = 0;
  for (let c = 0; c < C; c++) {
    const n = sizes[c]!;
    const start = rng.int(YEAR_SECONDS - 86_400);
    convCreated[c] = start;
    convChannel[c] = channelPick.pick(rng);
    const gapMean = 60 + rng.int(6 * 3600);
    const span = Math.max(1, Math.min(YEAR_SECONDS - 1 - start, n * gapMean));
    const times: number[] = [];
    for (let i = 0; i < n; i++) times.push(start + rng.int(span));
    times.sort((a, b) => a - b);
    for (let i = 1; i < n; i++) if (rng.next() < 0.1) times[i] = times[i - 1]!; // burst: same second
    for (let i = 0; i < n; i++) respTime[k + i] = times[i]!;
    convUpdated[c] = n > 0 ? times[n - 1]! : start;
    k += n;
  }

  // Rows that carry the rare term: exactly RARE_TERM_ROWS distinct response indexes.
  const rare = new Set<number>();
  while (rare.size < Math.min(RARE_TERM_ROWS, R)) rare.add(rng.int(R));

  const vocab = [...COMMON_WORDS, ...pseudoWords(rng, 4000)];
  const wordPick = new Weighted(vocab.map((_, i) => 1 / Math.pow(i + 2, 0.9)));
  const text = (min: number, max: number, end: string, inject: string[] = []) => {
    const len = min + Math.floor((max - min) * Math.pow(rng.next(), 1.3));
    const words: string[] = [];
    let size = 0;
    while (size < len - 1) {
      const w = vocab[wordPick.pick(rng)]!;
      words.push(w);
      size += w.length + 1;
    }
    for (const term of inject) words.splice(rng.int(words.length + 1), 0, term);
    let s = words.join(' ');
    if (s.length > max - 1 && inject.length === 0) s = s.slice(0, max - 1).trimEnd();
    return s.charAt(0).toUpperCase() + s.slice(1) + end;
  };
  const ts = (sec: number) => new Date((YEAR_START + sec) * 1000).toISOString().slice(0, 19).replace('T', ' ');
  const count = (p: number, scale: number) => (rng.next() < p ? 0 : 1 + Math.floor(-Math.log(1 - rng.next()) * scale));

  const out = fs.createWriteStream(file, { encoding: 'utf8' });
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  let chunk: string[] = [];
  let chunkSize = 0;
  let bytes = 0;
  const emit = async (line: string) => {
    chunk.push(line);
    chunkSize += line.length + 1;
    if (chunkSize >= 1 << 20) await flush();
  };
  const flush = async () => {
    if (chunk.length === 0) return;
    const data = `${chunk.join('\n')}\n`;
    bytes += Buffer.byteLength(data);
    chunk = [];
    chunkSize = 0;
    if (!out.write(data)) await Promise.race([new Promise<void>((r) => out.once('drain', () => r())), failed]);
  };

  const convIds: string[] = new Array(C);
  let conversationTermTitles = 0;
  for (let c = 0; c < C; c++) {
    const id = rng.uuid();
    convIds[c] = id;
    const withTerm = rng.next() < 0.01;
    if (withTerm) conversationTermTitles++;
    const ch = convChannel[c]!;
    await emit(
      JSON.stringify({
        type: 'conversation',
        conversation_id: id,
        title: text(20, 80, '', withTerm ? [CONVERSATION_TERM] : []),
        status: ['Open', 'Closed', 'Resolved'][rng.int(3)],
        channel_id: FIRST_CHANNEL_ID + ch,
        channel_name: CHANNEL_NAMES[ch],
        created_at: ts(convCreated[c]!),
        updated_at: ts(convUpdated[c]!),
      }),
    );
  }
  let commonTermRows = 0;
  k = 0;
  for (let c = 0; c < C; c++) {
    for (let i = 0; i < sizes[c]!; i++, k++) {
      const common = rng.next() < COMMON_TERM_RATE;
      if (common) commonTermRows++;
      const isRare = rare.has(k);
      const inQuestion = rng.next() < 0.5;
      const terms = (q: boolean) => [...(isRare && q === (k % 2 === 0) ? [RARE_TERM] : []), ...(common && q === inQuestion ? [COMMON_TERM] : [])];
      const question = text(50, 220, '?', terms(true));
      const answer = text(80, 300, '.', terms(false));
      await emit(
        JSON.stringify({
          type: 'response',
          response_id: rng.uuid(),
          conversation_id: convIds[c],
          question,
          answer,
          channel_id: FIRST_CHANNEL_ID + convChannel[c]!,
          created_at: ts(respTime[k]!),
          likes: count(0.7, 6),
          dislikes: count(0.9, 2),
          comments: count(0.95, 1.5),
        }),
      );
    }
  }
  await flush();
  await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]);

  const sorted = Array.from(sizes).sort((a, b) => a - b);
  return {
    ...opts,
    file,
    bytes,
    seconds: (Date.now() - started) / 1000,
    rareTermRows: rare.size,
    commonTermRows,
    conversationTermTitles,
    largestConversation: sorted[sorted.length - 1] ?? 0,
    medianConversation: sorted[Math.floor(sorted.length / 2)] ?? 0,
    channels: CHANNEL_NAMES.length,
  };
}
