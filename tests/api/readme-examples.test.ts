import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { demoCurl, demoShellVariables, DEMO_CHANNEL_IDS, seedDemoAccount, type DemoAccount } from '../../lib/demo/seed';
import { startTestServer, type TestServer } from '../helpers/server';

/**
 * README's Customer API examples run as printed against the demo account: the variable lines
 * are replaced by the ones `npm start` prints for the demo, every `curl` line runs unchanged in
 * bash (with the real curl), and each answers 200 with records.
 */
const run = promisify(execFile);
let server: TestServer;
let demo: DemoAccount;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readme-'));

before(async () => {
  server = await startTestServer();
  demo = await seedDemoAccount();
});
after(async () => {
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The ```sh block of the Customer API section that uses $BASE. */
function readmeExamples(): { variables: string[]; curls: string[] } {
  const readme = fs.readFileSync('README.md', 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes('$BASE'));
  assert.ok(block, 'README has a sh block of API examples');
  const lines = block.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  return { variables: lines.filter((l) => /^[A-Z_]+=/.test(l)), curls: lines.filter((l) => l.startsWith('curl ')) };
}

/** Runs one printed line in bash; curl is wrapped only to capture the status and the body. */
async function runPrinted(variables: string[], line: string): Promise<{ status: number; body: any }> {
  const out = path.join(tmp, 'body');
  const script = [
    'set -e',
    ...variables,
    `curl() { command curl -sS -o ${JSON.stringify(out)} -w '%{http_code}' "$@"; }`,
    line,
  ].join('\n');
  const { stdout } = await run('bash', ['-c', script], { timeout: 20_000 });
  const text = fs.readFileSync(out, 'utf8');
  return { status: Number(stdout.trim()), body: JSON.parse(text) };
}

describe('README examples against the demo account', () => {
  it('the demo has the ids README uses and prints the variables README names', () => {
    assert.deepEqual(demo.channel_ids, DEMO_CHANNEL_IDS, 'a fresh demo account gets channels 7 and 8');
    const printed = demoShellVariables(server.url, demo);
    const { variables } = readmeExamples();
    assert.deepEqual(printed.filter((l) => !l.startsWith('#')).map((l) => l.split('=')[0]), variables.map((l) => l.split('=')[0]));
  });

  it('every curl line of the Customer API block answers 200 with records, as printed', async () => {
    const { curls } = readmeExamples();
    assert.ok(curls.length >= 5, `found ${curls.length} curl lines`);
    const variables = demoShellVariables(server.url, demo).filter((l) => !l.startsWith('#'));
    for (const line of curls) {
      const r = await runPrinted(variables, line);
      assert.equal(r.status, 200, `${line}\n→ ${JSON.stringify(r.body)}`);
      if ('results' in r.body) assert.ok(r.body.count > 0 && r.body.results.length > 0, `${line} finds records: ${JSON.stringify(r.body).slice(0, 200)}`);
      else assert.equal(r.body.conversation_id, demo.conversation_id, line);
    }
  });

  it('the "try it" line npm start prints answers 200', async () => {
    const r = await runPrinted([], demoCurl(server.url, demo.api_key));
    assert.equal(r.status, 200);
    assert.equal(r.body.results.length, 5);
  });
});
