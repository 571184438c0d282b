/**
 * Fallback importer for the benchmark, used only when the CLI `import` stalls or fails on its
 * input handling: the same lib/imports/service.ts importNdjson (staging, checks, upsert, VACUUM
 * ANALYZE) in its own process, fed by a readline iterator attached BEFORE the first await, so
 * no line is emitted before anyone listens.
 * usage: tsx tests/bench/import-runner.ts ACCOUNT_ID FILE   (env DATABASE_URL or DATA_DIR)
 * Prints {"conversations":N,"responses":N} like the CLI.
 */
import fs from 'node:fs';
import readline from 'node:readline';

async function main() {
  const [account, file] = process.argv.slice(2);
  if (!account || !file) throw new Error('usage: import-runner ACCOUNT_ID FILE');
  const size = fs.statSync(file).size;
  const stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  const iterator = rl[Symbol.asyncIterator]();
  const lines: AsyncIterable<string> = { [Symbol.asyncIterator]: () => iterator };
  const { importNdjson } = await import('../../lib/imports/service');
  const { closeDatabase } = await import('../../db/client');
  try {
    const result = await importNdjson(
      Number(account),
      {
        lines,
        fractionRead: () => stream.bytesRead / Math.max(size, 1),
        large: size >= 8 * 1024 * 1024,
      },
      (p) => {
        if (p.message) process.stderr.write(`${p.message}\n`);
      },
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    stream.destroy();
    await closeDatabase();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
