/** Entry point: `npm start` (compiled to dist/server.js) and `npm run dev` (tsx). */
import { demoCurl, demoMailCommand, demoShellVariables } from './lib/demo/seed';
import { getEnv } from './lib/env';
import { startServer } from './lib/server/http';

async function main() {
  const dev = process.argv.includes('--dev');
  const server = await startServer({ dev });
  console.log(`svc is listening on ${server.url} (${dev ? 'development' : 'production'})`);
  if (server.demo) {
    const d = server.demo;
    console.log(
      [
        '',
        'First start: created a demo account (shown once; SVC_DEMO=0 turns this off).',
        `  dashboard login  ${server.url}/login   ${d.admin_email} / ${d.admin_password}`,
        `  agent login      ${d.agent_email} / ${d.agent_password} (role agent: no API keys, webhooks, widget, bot or team)`,
        `  API key          ${d.api_key}`,
        `  widget client    ${d.widget_client_id} (domains localhost, 127.0.0.1; secret ${d.widget_client_secret})`,
        server.inboundSmtpPort
          ? `  customers' mail  ${d.email_address} (two demo mails are in the inbox); send one:\n    ${demoMailCommand(d.email_address, server.inboundSmtpPort)}`
          : `  customers' mail  ${d.email_address} (with INBOUND_SMTP_PORT set; two demo mails are in the inbox)`,
        `  try it           ${demoCurl(server.url, d.api_key)}`,
        '',
        "  README's Customer API examples run as printed after:",
        ...demoShellVariables(server.url, d).map((l) => `    ${l}`),
        '',
      ].join('\n'),
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: draining, then shutting down`);
    // The drain lets answers run for SHUTDOWN_GRACE_SECONDS; closing gets 10 s more.
    const force = setTimeout(() => process.exit(1), (getEnv().SHUTDOWN_GRACE_SECONDS + 10) * 1000);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((e: Error & { code?: string }) => {
  console.error(`svc could not start: ${e.message}`);
  process.exit(1);
});
