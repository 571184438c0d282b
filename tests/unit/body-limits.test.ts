/** The body limits live in lib/net/body-limits.json: Next's server-action limit and the server's own checks read the same numbers. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import limits from '../../lib/net/body-limits.json';
import { SERVER_ACTION_BODY_MAX } from '../../lib/server/page-bodies';
import { KB_MAX_BYTES } from '../../lib/knowledge/service';

describe('body limits', () => {
  it('Next is configured with the server-action limit the page-body guard refuses above', async () => {
    const file = pathToFileURL(path.join(process.cwd(), 'next.config.mjs')).href;
    const config = (await import(file)).default as { experimental: { serverActions: { bodySizeLimit: unknown } } };
    assert.equal(config.experimental.serverActions.bodySizeLimit, limits.serverActionBodyBytes);
    assert.equal(SERVER_ACTION_BODY_MAX, limits.serverActionBodyBytes);
  });

  it('a knowledge-base document of the largest allowed size fits in one server action with its multipart framing', () => {
    assert.equal(KB_MAX_BYTES, limits.knowledgeDocumentBytes);
    // Boundaries, part headers (a file name of up to 255 UTF-8 bytes, percent-escaped) and Next's action fields.
    assert.ok(
      limits.serverActionBodyBytes - limits.knowledgeDocumentBytes >= 64 * 1024,
      `${limits.serverActionBodyBytes} leaves under 64 KiB of framing around a ${limits.knowledgeDocumentBytes}-byte document`,
    );
  });
});
