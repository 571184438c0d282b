/**
 * A real SMTP server in its own process (smtp-server + mailparser), for mail tests: it prints
 * {"listening": port} once, then one JSON line per delivered message (parsed, and its header block as it arrived). argv[2]: the port (0 = any).
 * A recipient `refused-…@` is refused with 550 at RCPT (a mailbox that does not exist).
 */
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onAuth(auth, _session, cb) {
    cb(null, { user: auth.username });
  },
  // A mailbox that does not exist: a recipient starting with `refused-` gets a permanent 550 at RCPT.
  onRcptTo(address, _session, cb) {
    if (address.address.startsWith('refused-')) cb(Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 }));
    else cb();
  },
  onData(stream, session, cb) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    new Promise<Buffer>((resolve, reject) => stream.on('end', () => resolve(Buffer.concat(chunks))).on('error', reject))
      .then(async (raw) => {
        const head = raw.toString('utf8');
        const blank = head.search(/\r?\n\r?\n/);
        return { m: await simpleParser(raw), header: blank >= 0 ? head.slice(0, blank) : head };
      })
      .then(
        ({ m, header }) => {
          process.stdout.write(
            `${JSON.stringify({
              envelopeTo: session.envelope.rcptTo.map((r) => r.address),
              from: m.from?.text,
              to: Array.isArray(m.to) ? m.to.map((t) => t.text).join(', ') : m.to?.text,
              subject: m.subject,
              text: m.text,
              html: m.html || null,
              messageId: m.messageId ?? null,
              inReplyTo: m.inReplyTo ?? null,
              references: Array.isArray(m.references) ? m.references : m.references ? [m.references] : [],
              replyTo: m.replyTo?.value[0]?.address ?? null,
              header,
            })}\n`,
          );
          cb();
        },
        (e: Error) => cb(e),
      );
  },
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: (server.server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.stdin.on('end', () => process.exit(0)).resume();
