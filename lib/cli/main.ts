import { parseArgs, type ParseArgsConfig } from 'node:util';
import { inboundAddress, regenerateInboundAddress } from '../email/address';
import { closeDatabase } from '../../db/client';
import { createAccount, createAdminUser, createApiKey, revokeApiKey, validate } from '../accounts/service';
import { AccountId } from '../accounts/contract';
import { isAppError } from '../core/errors';
import { changeAdminPassword } from '../accounts/admin-password';
import { seedDemoAccount, demoCurl, demoShellVariables, serverAddress } from '../demo/seed';
import { importNdjsonFile } from '../imports/service';
import { importProgressReporter } from './progress';
import { addKnowledgeFile } from '../knowledge/service';
import { runAnswerTestsFromCli } from '../answer-tests/service';
import { createWidgetClient, deleteWidgetClientById } from '../widget-clients/service';
import { rollbackTrack, setTrack } from '../widget-releases/service';
import { listMails } from '../mail/service';
import { listAccountMembers } from '../team/service';
import { deleteAccountByOperator } from '../privacy/account-deletion';
import { CLI } from '../audit/contract';
import { listAudit } from '../audit/service';
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookEndpoints } from '../webhooks/service';
import { setRetention } from '../privacy/retention';
import { eraseVisitor, openVisitorExport } from '../privacy/visitor';

/**
 * The admin CLI (docs/contracts.md §2): `npm run --silent cli -- <command>`. Success: exit 0 and ONE JSON
 * object on stdout. Failure: a one-line message on stderr and a non-zero exit. Each command is a
 * thin door into the same services the web server uses.
 */
class UsageError extends Error {}

type Options = ParseArgsConfig['options'];
type Command = {
  usage: string;
  options: Options;
  run: (v: Record<string, string | string[] | boolean | undefined>) => Promise<unknown>;
  /** The exit status of a command whose JSON reports a failure (`bot test`: 1 when a case fails); 0 by default. */
  exitCode?: (result: never) => number;
};

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const accountOf = (v: unknown) => validate(AccountId, v, { input: 'account' }) as number;

const COMMANDS: Record<string, Command> = {
  'account create': {
    usage: 'account create --name NAME --admin-email EMAIL --admin-password PASSWORD',
    options: { name: { type: 'string' }, 'admin-email': { type: 'string' }, 'admin-password': { type: 'string' } },
    run: (v) => createAccount({ name: need(v, 'name'), adminEmail: need(v, 'admin-email'), adminPassword: need(v, 'admin-password') }),
  },
  'account delete': {
    usage: 'account delete --account ID --confirm NAME',
    options: { account: { type: 'string' }, confirm: { type: 'string' } },
    run: (v) =>
      deleteAccountByOperator({ accountId: accountOf(need(v, 'account')), confirm: need(v, 'confirm') }, (p) =>
        process.stderr.write(`account delete: ${p.rows} rows of ${p.table}\n`),
      ),
  },
  'apikey create': {
    usage: 'apikey create --account ID [--name LABEL] [--env live|test]',
    options: { account: { type: 'string' }, name: { type: 'string' }, env: { type: 'string' } },
    run: (v) => createApiKey(CLI, { accountId: accountOf(need(v, 'account')), name: str(v.name), env: str(v.env) as 'live' | 'test' | undefined }),
  },
  'apikey revoke': {
    usage: 'apikey revoke --key-id KEY_ID',
    options: { 'key-id': { type: 'string' } },
    run: (v) => revokeApiKey(CLI, null, need(v, 'key-id')),
  },
  import: {
    usage: 'import --account ID --file PATH',
    options: { account: { type: 'string' }, file: { type: 'string' } },
    run: (v) => importNdjsonFile(accountOf(need(v, 'account')), need(v, 'file'), importProgressReporter()),
  },
  'user create': {
    usage: 'user create --account ID --email EMAIL --password PASSWORD [--role owner|admin|agent] [--name NAME]',
    options: { account: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' } },
    run: (v) =>
      createAdminUser(CLI, {
        accountId: accountOf(need(v, 'account')),
        email: need(v, 'email'),
        password: need(v, 'password'),
        role: str(v.role) as 'owner' | 'admin' | 'agent' | undefined,
        name: str(v.name),
      }),
  },
  'member list': {
    usage: 'member list --account ID',
    options: { account: { type: 'string' } },
    run: (v) => listAccountMembers(accountOf(need(v, 'account'))),
  },
  'mail list': {
    usage: 'mail list [--to EMAIL]',
    options: { to: { type: 'string' } },
    run: (v) => listMails({ to: str(v.to) }),
  },
  'email address': {
    usage: 'email address --account ID [--regenerate]',
    options: { account: { type: 'string' }, regenerate: { type: 'boolean' } },
    run: (v) => (v.regenerate ? regenerateInboundAddress(CLI, accountOf(need(v, 'account'))) : inboundAddress(accountOf(need(v, 'account')))),
  },
  'user password': {
    usage: 'user password --email EMAIL --password PASSWORD',
    options: { email: { type: 'string' }, password: { type: 'string' } },
    run: (v) => changeAdminPassword({ email: need(v, 'email'), password: need(v, 'password') }),
  },
  'widget client create': {
    usage: 'widget client create --account ID --domain HOST [--domain HOST …] [--channel CHANNEL_ID] [--name NAME]',
    options: { account: { type: 'string' }, domain: { type: 'string', multiple: true }, channel: { type: 'string' }, name: { type: 'string' } },
    run: (v) =>
      createWidgetClient(CLI, {
        accountId: accountOf(need(v, 'account')),
        name: typeof v.name === 'string' ? v.name : undefined,
        domains: Array.isArray(v.domain) ? v.domain : [],
        channelId: v.channel === undefined ? undefined : (v.channel as unknown as number),
      }),
  },
  'widget client delete': {
    usage: 'widget client delete --client-id ID',
    options: { 'client-id': { type: 'string' } },
    run: (v) => deleteWidgetClientById(CLI, need(v, 'client-id')),
  },
  'kb add': {
    usage: 'kb add --account ID --file PATH',
    options: { account: { type: 'string' }, file: { type: 'string' } },
    run: (v) => addKnowledgeFile(accountOf(need(v, 'account')), need(v, 'file')),
  },
  'bot test': {
    usage: 'bot test --account ID',
    options: { account: { type: 'string' } },
    run: (v) => runAnswerTestsFromCli(accountOf(need(v, 'account'))),
    exitCode: (run: { failed: number }) => (run.failed > 0 ? 1 : 0),
  },
  'widget track set': {
    usage: 'widget track set --track stable|beta|lts --version X.Y.Z',
    options: { track: { type: 'string' }, version: { type: 'string' } },
    run: (v) => setTrack(need(v, 'track'), need(v, 'version')),
  },
  'widget track rollback': {
    usage: 'widget track rollback --track stable|beta|lts',
    options: { track: { type: 'string' } },
    run: (v) => rollbackTrack(need(v, 'track')),
  },
  'webhook create': {
    usage: 'webhook create --account ID --url URL [--event TYPE …]',
    options: { account: { type: 'string' }, url: { type: 'string' }, event: { type: 'string', multiple: true } },
    run: (v) => createWebhookEndpoint(CLI, { accountId: accountOf(need(v, 'account')), url: need(v, 'url'), events: Array.isArray(v.event) ? v.event : [] }),
  },
  'webhook list': {
    usage: 'webhook list --account ID',
    options: { account: { type: 'string' } },
    run: (v) => listWebhookEndpoints(accountOf(need(v, 'account'))),
  },
  'webhook delete': {
    usage: 'webhook delete --endpoint-id ID',
    options: { 'endpoint-id': { type: 'string' } },
    run: (v) => deleteWebhookEndpoint(CLI, null, need(v, 'endpoint-id')),
  },
  'audit list': {
    usage: 'audit list --account ID [--limit N]',
    options: { account: { type: 'string' }, limit: { type: 'string' } },
    run: (v) => listAudit({ accountId: accountOf(need(v, 'account')), limit: v.limit }),
  },
  'retention set': {
    usage: 'retention set --account ID --days N|off',
    options: { account: { type: 'string' }, days: { type: 'string' } },
    run: (v) => setRetention(CLI, accountOf(need(v, 'account')), { days: daysOption(need(v, 'days')) }),
  },
  'privacy erase': {
    usage: 'privacy erase --account ID (--email EMAIL | --visitor VISITOR_ID)',
    options: { account: { type: 'string' }, email: { type: 'string' }, visitor: { type: 'string' } },
    run: (v) => eraseVisitor(CLI, accountOf(need(v, 'account')), visitorOption(v)),
  },
  'privacy export': {
    usage: 'privacy export --account ID (--email EMAIL | --visitor VISITOR_ID)',
    options: { account: { type: 'string' }, email: { type: 'string' }, visitor: { type: 'string' } },
    run: async (v) => new JsonChunks((await openVisitorExport(CLI, accountOf(need(v, 'account')), visitorOption(v))).chunks),
  },
  seed: {
    usage: 'seed --demo [--url URL]',
    options: { demo: { type: 'boolean' }, url: { type: 'string' } },
    run: async (v) => {
      if (!v.demo) throw new UsageError('seed needs --demo');
      const explicit = v.url === undefined ? undefined : serverUrlOption(v.url);
      const demo = await seedDemoAccount();
      const url = await serverAddress(explicit);
      return { ...demo, server_url: url, login_url: `${url}/login`, curl: demoCurl(url, demo.api_key), readme_variables: demoShellVariables(url, demo) };
    },
  },
};

/** --url: the server's address as its users reach it, http(s) only. */
function serverUrlOption(raw: unknown): string {
  const text = typeof raw === 'string' ? raw : '';
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new UsageError(`--url must be an http(s) address such as http://localhost:3000, got ${JSON.stringify(text)}`);
  }
  return text;
}

/** --days: a whole number of days, or `off`; the service's schema says what is wrong with a number. */
function daysOption(raw: string): number | null | string {
  if (raw === 'off') return null;
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

/** Exactly one of --email and --visitor. */
function visitorOption(v: Record<string, unknown>): { email: string } | { visitorId: string } {
  const email = str(v.email);
  const visitor = str(v.visitor);
  if ((email === undefined) === (visitor === undefined)) throw new UsageError('give exactly one of --email and --visitor');
  return email !== undefined ? { email } : { visitorId: visitor! };
}

/** A command's JSON written as it is read (a visitor's export), never held whole. */
class JsonChunks {
  constructor(readonly chunks: AsyncIterable<string>) {}
}

function need(v: Record<string, unknown>, name: string): string {
  const value = v[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`missing --${name}`);
  return value;
}

function usage(): string {
  return `usage: npm run --silent cli -- <command>\n${Object.values(COMMANDS)
    .map((c) => `  ${c.usage}`)
    .join('\n')}`;
}

async function main(argv: string[]): Promise<number> {
  // stdout carries exactly one JSON object: anything else a library prints goes to stderr.
  console.log = console.info = console.warn = console.debug = (...a: unknown[]) => console.error(...a);
  const key = [argv.slice(0, 3).join(' '), argv.slice(0, 2).join(' '), argv[0] ?? ''].find((k) => k in COMMANDS);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stderr.write(`${usage()}\n`);
    return 0;
  }
  if (argv.length === 0) {
    process.stderr.write('error: no command given (--help for usage)\n');
    return 2;
  }
  if (!key) {
    process.stderr.write(`error: unknown command "${argv.slice(0, 3).join(' ')}" (commands: ${Object.keys(COMMANDS).join(', ')}; --help for usage)\n`);
    return 2;
  }
  const command = COMMANDS[key]!;
  try {
    const { values } = parseArgs({ args: argv.slice(key.split(' ').length), options: command.options, strict: true, allowPositionals: false });
    const result = await command.run(values);
    if (result instanceof JsonChunks) {
      for await (const chunk of result.chunks) if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
      process.stdout.write('\n');
      return 0;
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return command.exitCode?.(result as never) ?? 0;
  } catch (e) {
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K'); // a progress bar may hold the line
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${(e as Error).message} (usage: npm run --silent cli -- ${command.usage})\n`);
      return 2;
    }
    if (isAppError(e)) {
      process.stderr.write(`error: ${e.message.replace(/\s*\n\s*/g, ' ')}\n`);
      return 1;
    }
    process.stderr.write(`error: unexpected failure: ${(e as Error)?.message ?? String(e)}\n`);
    return 1;
  } finally {
    await closeDatabase().catch(() => {});
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
