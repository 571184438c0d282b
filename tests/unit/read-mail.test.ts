/**
 * A received mail as the email channel reads it (lib/documents/mail.ts): the new text of replies
 * from the common clients (fixtures written from their documented reply formats), HTML-only mail,
 * signatures, thread ids, automatic mail, delivery reports and attachments.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import MailComposer from 'nodemailer/lib/mail-composer';
import { INLINE_IMAGE_MIN_BYTES, readMail } from '../../lib/documents/mail';

const fixture = (name: string) => new Uint8Array(fs.readFileSync(`tests/fixtures/mail/${name}.eml`));
const enc = (s: string) => new TextEncoder().encode(s);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const NEW_TEXT = 'Thanks, that worked! One more thing: can I change my email address?';

describe('reading a received mail', () => {
  for (const client of ['gmail-reply', 'outlook-reply', 'apple-mail-reply']) {
    it(`${client}: the new text only, without the quoted history or the device line`, async () => {
      const m = await readMail(fixture(client));
      assert.equal(m.text, NEW_TEXT);
      assert.equal(m.from?.address, 'ada@example.org');
      assert.equal(m.inReplyTo, '<svc-out-1@mail.svc.test>');
      assert.equal(m.automatic, false);
    });
  }

  it('keeps the thread ids and the display name', async () => {
    const m = await readMail(fixture('gmail-reply'));
    assert.equal(m.messageId, '<CAF=gmail-1@mail.gmail.com>');
    assert.deepEqual(m.references, ['<svc-in-0@example.org>', '<svc-out-1@mail.svc.test>']);
    assert.deepEqual(m.from, { address: 'ada@example.org', name: 'Ada Visitor' });
    assert.equal(m.subject, 'Re: Your password');
  });

  it('an HTML-only mail becomes text', async () => {
    const m = await readMail(fixture('html-only'));
    assert.match(m.text, /are you open on Sundays\?/i);
    assert.doesNotMatch(m.text, /<\/?p>|<b>/);
  });

  it('a signature after "-- " is removed; an attachment is kept with its type and size', async () => {
    const m = await readMail(fixture('attachment'));
    assert.equal(m.text, 'The lid of my kettle arrived broken, photo attached.');
    assert.equal(m.attachments.length, 1);
    assert.deepEqual([m.attachments[0]!.filename, m.attachments[0]!.contentType, m.attachments[0]!.size], ['lid.png', 'image/png', 70]);
  });

  it('an auto-reply is automatic; a delivery report is a report', async () => {
    assert.equal((await readMail(fixture('auto-reply'))).automatic, true);
    const dsn = await readMail(fixture('delivery-report'));
    assert.equal(dsn.report, true);
  });

  it('a mail of garbage still reads (no sender, no ids), and a reply that is only quoted keeps its text', async () => {
    const junk = await readMail(new TextEncoder().encode('\u0000\u0001 not a mail at all\r\n\r\n>>>'));
    assert.equal(junk.from, null);
    assert.equal(junk.messageId, null);
    const quoted = await readMail(new TextEncoder().encode('From: a@b.c\r\nSubject: x\r\n\r\n> only a quote\r\n'));
    assert.equal(quoted.text, '> only a quote');
  });

  it('files: attachments and named inline images that are not tiny, the first five with their bytes, the rest counted', async () => {
    const image = (bytes: number) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(bytes - 4, 1)]);
    const raw = await new MailComposer({
      from: 'ada@example.org',
      subject: 'Files',
      html: '<p>See <img src="cid:logo"> and <img src="cid:shot"></p>',
      attachments: [
        { filename: 'logo.png', content: image(INLINE_IMAGE_MIN_BYTES - 1), cid: 'logo' },
        { filename: 'screenshot.png', content: image(INLINE_IMAGE_MIN_BYTES), cid: 'shot' },
        ...['1', '2', '3', '4', '5', '6'].map((n) => ({ filename: `${n}.txt`, content: `file ${n}` })),
      ],
    })
      .compile()
      .build();
    const m = await readMail(new Uint8Array(raw));
    assert.deepEqual(
      m.attachments.map((a) => [a.filename, a.size]),
      [
        ['screenshot.png', INLINE_IMAGE_MIN_BYTES],
        ['1.txt', 6],
        ['2.txt', 6],
        ['3.txt', 6],
        ['4.txt', 6],
      ],
    );
    assert.equal(Buffer.from(m.attachments[1]!.content).toString(), 'file 1');
    assert.equal(m.attachmentsLeftOut, 2);
  });
});

describe('reading a malformed mail (docs/decisions/email.md "Bad input")', () => {
  it('broken MIME: an unterminated boundary, a part without headers, a mail without any header still read', async () => {
    const open = await readMail(
      enc(
        'From: ada@example.org\r\nSubject: Open\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nThe lid is broken.\r\n--zz\r\n\r\nno headers here',
      ),
    );
    assert.equal(open.from?.address, 'ada@example.org');
    assert.match(open.text, /The lid is broken\./);
    const bare = await readMail(enc('\r\nJust a body, no header at all.\r\n'));
    assert.deepEqual([bare.from, bare.subject, bare.text], [null, '', 'Just a body, no header at all.']);
    const noBoundary = await readMail(enc('From: ada@example.org\r\nContent-Type: multipart/mixed\r\n\r\nWhere is the boundary?\r\n'));
    assert.equal(noBoundary.from?.address, 'ada@example.org');
  });

  it('10,000 parts, or parts nested 2,000 deep: read within the document time limit, no file kept, the body named unreadable, the sender kept', async () => {
    let parts = '';
    for (let i = 0; i < 10_000; i++) parts += `--zz\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename="${i}.txt"\r\n\r\nfile ${i}\r\n`;
    const started = Date.now();
    const m = await readMail(enc(`From: Ada <ada@example.org>\r\nSubject: Many\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n${parts}--zz--\r\n`));
    // The default DOCUMENT_TIMEOUT_MS (lib/env.ts): the worker stops a read that takes longer.
    assert.ok(Date.now() - started < 10_000, `${Date.now() - started} ms`);
    assert.deepEqual([m.from?.address, m.subject, m.attachments.length], ['ada@example.org', 'Many', 0]);
    assert.match(m.text, /^\[The body of this mail could not be read \(Max allowed child nodes exceeded\)/);
    assert.equal(m.unreadable, 'Max allowed child nodes exceeded');
    // Parts nested 2,000 deep: the same bound, no stack overflow.
    let nested = '';
    for (let i = 0; i < 2000; i++) nested += `--b${i}\r\nContent-Type: multipart/mixed; boundary=b${i + 1}\r\n\r\n`;
    const deep = await readMail(enc(`From: ada@example.org\r\nContent-Type: multipart/mixed; boundary=b0\r\n\r\n${nested}--b2000\r\n\r\ndeep\r\n`));
    assert.deepEqual([deep.from?.address, /could not be read/.test(deep.text)], ['ada@example.org', true]);
    // Under the parser's bound of parts: the first five files kept, the rest counted.
    const some = parts
      .split('--zz\r\n')
      .slice(1, 201)
      .map((p) => `--zz\r\n${p}`)
      .join('');
    const read = await readMail(enc(`From: ada@example.org\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n${some}--zz--\r\n`));
    assert.deepEqual([read.attachments.length, read.attachmentsLeftOut], [5, 195]);
  });

  it('a line too long for the reply parser (quadratic in its length) keeps the whole text at once', async () => {
    const started = Date.now();
    const m = await readMail(enc(`From: ada@example.org\r\n\r\n${'>'.repeat(60_000)}x\r\n`));
    assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
    assert.equal(m.text.length, 60_001);
  });

  it("a 2 MB header block is past the parser's bound: the top header read alone", async () => {
    const m = await readMail(enc(`From: ada@example.org\r\nSubject: Big\r\n${'X-Filler: y\r\n'.repeat(200_000)}\r\nbody\r\n`));
    assert.deepEqual([m.from?.address, m.subject], ['ada@example.org', 'Big']);
    assert.match(m.text, /could not be read/);
  });

  it('invalid and unknown charsets: the text is still read, nothing throws', async () => {
    const unknown = await readMail(enc('From: a@b.c\r\nSubject: =?x-klingon?Q?Qapla?=\r\nContent-Type: text/plain; charset=x-klingon\r\n\r\nhello world\r\n'));
    assert.equal(unknown.text, 'hello world');
    assert.match(unknown.subject, /Qapla/);
    const bytes = Buffer.concat([
      Buffer.from('From: a@b.c\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nbroken '),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from(' utf-8\r\n'),
    ]);
    assert.match((await readMail(new Uint8Array(bytes))).text, /^broken .* utf-8$/);
    const base64 = await readMail(enc('From: a@b.c\r\nContent-Type: text/plain; charset=utf-7\r\nContent-Transfer-Encoding: base64\r\n\r\n!!not base64!!\r\n'));
    assert.equal(typeof base64.text, 'string');
  });

  it('a From or Subject carrying CR/LF (encoded or folded) gives a name, address and subject on one line', async () => {
    const injected = `=?utf-8?B?${b64('x\r\nBcc: victim@evil.test')}?=`;
    for (const from of [
      `${injected} <ada@example.org>`,
      '"ada\r\n Bcc: victim@evil.test" <ada@example.org>',
      `=?utf-8?B?${b64('ada@example.org\r\nBcc: victim@evil.test')}?=`,
      `<ada@example.org\r\n Bcc: victim@evil.test>`,
    ]) {
      const m = await readMail(enc(`From: ${from}\r\nReply-To: ${injected} <x@example.org>\r\nSubject: ${injected}\r\n\r\nhi\r\n`));
      for (const v of [m.from?.address, m.from?.name, m.replyTo, m.subject]) assert.doesNotMatch(v ?? '', /[\r\n]/, from);
      assert.ok(m.from === null || m.from.address === 'ada@example.org', JSON.stringify(m.from));
      assert.equal(m.subject, 'x Bcc: victim@evil.test');
    }
  });
});
