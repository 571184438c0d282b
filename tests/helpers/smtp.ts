/** Starts and stops the SMTP server process of tests/helpers/smtp-child.ts, and waits for its messages. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export type ReceivedMail = {
  envelopeTo: string[];
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  /** Threading headers (mail in a conversation's thread). */
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  replyTo: string | null;
  /** The header block as it arrived, folded lines and all. */
  header: string;
};

export type SmtpServer = {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** Resolves with the first message (already received or arriving) that matches. */
  waitFor(match: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  stop(): Promise<void>;
};

export async function startSmtpServer(port = 0, received: ReceivedMail[] = [], onMail?: (m: ReceivedMail) => void): Promise<SmtpServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/smtp-child.ts', String(port)], {
    cwd: process.cwd(),
    stdio: ['pipe', 'pipe', 'inherit'], // it exits when our end of stdin closes (this process died)
  });
  const waiters = new Set<() => void>();
  const listening = new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`SMTP server exited (${code}) before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as { listening?: number } & ReceivedMail;
      if (msg.listening !== undefined) {
        resolve(msg.listening);
        return;
      }
      received.push(msg);
      onMail?.(msg);
      for (const w of waiters) w();
    });
  });
  const actual = await listening;
  return {
    port: actual,
    url: `smtp://test:test@127.0.0.1:${actual}`,
    received,
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = received.find(match);
          if (m) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching mail within ${timeoutMs} ms (received: ${received.map((r) => r.subject).join(', ')})`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** The first link into the dashboard in a mail's text. */
export function linkIn(mail: ReceivedMail, path: string): string {
  const m = mail.text.match(new RegExp(`https?://\\S+${path}\\S*`));
  if (!m) throw new Error(`no ${path} link in: ${mail.text}`);
  return m[0];
}
