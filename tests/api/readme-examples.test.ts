// One database: PGlite — the quick start runs on the embedded database
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { conversationMails } from '../../lib/email/originals';
import { demoCurl, demoShellVariables, DEMO_CHANNEL_IDS, seedDemoAccount, type DemoAccount } from '../../lib/demo/seed';
import { startTestServer, type TestServer } from '../helpers/server';

/**
 * README's Customer API examples run as printed against the demo account of a fresh install
 * (as `npm start` creates it): the variable lines are replaced by the ones `npm start` prints,
 * every `curl` line runs unchanged in bash (with the real curl), and each answers 200 with records.
 * On PostgreSQL the file uses a database of its own, so it is the install's first account.
 */
const run = promisify(execFile);
let server: TestServer;
let demo: DemoAccount;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readme-'));
let ownDatabase: { admin: string; name: string } | null = null;

async function adminSql(url: string, statement: string) {
  const { default: postgres } = await import('postgres');
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client.unsafe(statement);
  } finally {
    await client.end();
  }
}

before(
  async () => {
    if (process.env.TEST_DB === 'postgres' && process.env.DATABASE_URL) {
      const url = new URL(process.env.DATABASE_URL);
      const name = `${url.pathname.slice(1)}_readme_${process.pid}`.replace(/[^a-z0-9_]/gi, '_').slice(0, 60);
      await adminSql(process.env.DATABASE_URL, `CREATE DATABASE "${name}"`);
      ownDatabase = { admin: process.env.DATABASE_URL, name };
      url.pathname = `/${name}`;
      process.env.DATABASE_URL = url.toString();
    }
    server = await startTestServer();
    demo = await seedDemoAccount();
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
    if (ownDatabase) await adminSql(ownDatabase.admin, `DROP DATABASE IF EXISTS "${ownDatabase.name}"`);
  },
  { timeout: 60_000 },
);

/** The ```sh block of the Customer API section that uses $BASE. */
function readmeExamples(): { variables: string[]; curls: string[] } {
  const readme = fs.readFileSync('README.md', 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes('$BASE'));
  assert.ok(block, 'README has a sh block of API examples');
  const lines = block
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return { variables: lines.filter((l) => /^[A-Z_]+=/.test(l)), curls: lines.filter((l) => l.startsWith('curl ')) };
}

/** Runs one printed line in bash; curl is wrapped only to capture the status and the body. */
async function runPrinted(variables: string[], line: string): Promise<{ status: number; body: any }> {
  const out = path.join(tmp, 'body');
  const script = ['set -e', ...variables, `curl() { command curl -sS -o ${JSON.stringify(out)} -w '%{http_code}' "$@"; }`, line].join('\n');
  const { stdout } = await run('bash', ['-c', script], { timeout: 20_000 });
  const text = fs.readFileSync(out, 'utf8');
  return { status: Number(stdout.trim()), body: JSON.parse(text) };
}

describe('README examples against the demo account', () => {
  it('the demo has the ids README uses and prints the variables README names', () => {
    assert.deepEqual(demo.channel_ids, DEMO_CHANNEL_IDS, 'a fresh demo account gets channels 7 and 8');
    const printed = demoShellVariables(server.url, demo);
    const { variables } = readmeExamples();
    assert.deepEqual(
      printed.filter((l) => !l.startsWith('#')).map((l) => l.split('=')[0]),
      variables.map((l) => l.split('=')[0]),
    );
  });

  it("the demo's handoff figures mean something: first responses after minutes, resolutions after tens of minutes, confirmed and assumed resolutions", async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const r = await fetch(`${server.url}/customer-api/v2/insights?from=${day(-29)}&to=${day(0)}`, { headers: { authorization: `Bearer ${demo.api_key}` } });
    assert.equal(r.status, 200);
    const body = (await r.json()) as {
      handoffs: number;
      median_first_response_seconds: number | null;
      median_resolution_seconds: number | null;
      csat: { ai: { responses: number }; human: { responses: number } };
      ai_involved: number;
      ai_resolved_confirmed: number;
      ai_resolved_assumed: number;
    };
    assert.ok(body.csat.ai.responses >= 1 && body.csat.human.responses >= 1, `ratings: ${JSON.stringify(body.csat)}`);
    assert.ok(body.handoffs >= 3, `handoffs: ${body.handoffs}`);
    // Five visitors end with "Great, thanks!" (two of them the only sign of their conversation): both parts of AI-resolved show.
    assert.ok(body.ai_involved >= 20 && body.ai_resolved_confirmed >= 5 && body.ai_resolved_assumed >= 1, `honest resolution: ${JSON.stringify(body)}`);
    const first = body.median_first_response_seconds;
    const resolution = body.median_resolution_seconds;
    assert.ok(first !== null && first >= 60 && first <= 30 * 60, `median first response after handoff: ${first} s`);
    assert.ok(resolution !== null && resolution >= 10 * 60 && resolution <= 3 * 3600, `median time to resolve: ${resolution} s`);
  });

  it('the demo shows the email channel: a mail the AI answered by mail, one waiting for a person, each with its original', async () => {
    assert.match(demo.email_address, /^[a-z2-7]{16}@/);
    const r = await fetch(`${server.url}/customer-api/v2/conversation?resultsPerPage=100`, { headers: { authorization: `Bearer ${demo.api_key}` } });
    assert.equal(r.status, 200);
    const mails = (
      (await r.json()) as { results: Array<{ conversation_id: string; title: string; channel_name: string; status: string; response_count: number }> }
    ).results.filter((c) => c.channel_name === 'Email');
    const byTitle = Object.fromEntries(mails.map((c) => [c.title, c]));
    assert.deepEqual(Object.keys(byTitle).sort(), ['Invoice for March', 'Paying by invoice']);
    assert.equal(byTitle['Paying by invoice']!.response_count, 1, 'the AI answered the payment question');
    assert.equal(byTitle['Paying by invoice']!.status, 'Open');
    assert.equal(byTitle['Invoice for March']!.status, 'Waiting', 'the mail asking for a person waits for the team');
    for (const c of mails) assert.equal((await conversationMails(demo.account_id, c.conversation_id)).length, 1, `${c.title}: its original is kept`);
  });

  it('every curl line of the Customer API block answers 200 with records, as printed', async () => {
    const { curls } = readmeExamples();
    assert.ok(curls.length >= 5, `found ${curls.length} curl lines`);
    const variables = demoShellVariables(server.url, demo).filter((l) => !l.startsWith('#'));
    for (const line of curls) {
      const r = await runPrinted(variables, line);
      assert.equal(r.status, 200, `${line}\n→ ${JSON.stringify(r.body)}`);
      if ('results' in r.body) assert.ok(r.body.count > 0 && r.body.results.length > 0, `${line} finds records: ${JSON.stringify(r.body).slice(0, 200)}`);
      else if ('series' in r.body) assert.ok(r.body.conversations > 0 && r.body.series.length === 30, `${line} counts the demo's conversations`);
      else assert.equal(r.body.conversation_id, demo.conversation_id, line);
    }
  });

  it('every curl line of the export block answers 200 with records, as printed', async () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('/export'));
    assert.ok(block, 'README has a sh block of export examples');
    const curls = block
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('curl '));
    assert.ok(curls.length >= 2);
    const variables = demoShellVariables(server.url, demo).filter((l) => !l.startsWith('#'));
    const out = path.join(tmp, 'export');
    for (const line of curls) {
      const script = ['set -e', ...variables, `curl() { command curl -sS -o ${JSON.stringify(out)} -w '%{http_code}' "$@"; }`, line].join('\n');
      const { stdout } = await run('bash', ['-c', script], { timeout: 20_000 });
      const lines = fs.readFileSync(out, 'utf8').split('\n').filter(Boolean);
      assert.equal(Number(stdout.trim()), 200, `${line}\n→ ${lines.slice(0, 2).join('\n')}`);
      assert.ok(lines.length >= 2, `${line} finds records`);
      if (!line.includes('format=csv')) for (const l of lines) assert.ok(JSON.parse(l).id, line);
    }
  });

  it("every curl line of the attachments block saves the demo's attached file under its own name, as printed", async () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('/attachments/'));
    assert.ok(block, 'README has a sh block of attachment examples');
    const curls = block
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('curl '));
    assert.ok(curls.length >= 1);
    const variables = demoShellVariables(server.url, demo).filter((l) => !l.startsWith('#'));
    for (const line of curls) {
      const dir = fs.mkdtempSync(path.join(tmp, 'attachment-'));
      await run('bash', ['-c', ['set -e', ...variables, line].join('\n')], { timeout: 20_000, cwd: dir });
      assert.deepEqual(fs.readdirSync(dir), ['order-note.txt'], line);
      assert.match(fs.readFileSync(path.join(dir, 'order-note.txt'), 'utf8'), /^Order 4711/, line);
    }
  });

  it('the "try it" line npm start prints answers 200', async () => {
    const r = await runPrinted([], demoCurl(server.url, demo.api_key));
    assert.equal(r.status, 200);
    assert.equal(r.body.results.length, 5);
  });
});
