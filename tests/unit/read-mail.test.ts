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
